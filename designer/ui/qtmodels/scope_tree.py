"""The rows of the Layer Explorer's "Group by scope" tree as flat arrays (no item objects):
every row — a module group or a layer — has an id; a group's children are its sub-groups
in module order, then its layers in the explorer's sort order. Groups left without shown
layers by the filters are left out. Built in O(layers) from :mod:`designer.core.hierarchy`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt

from designer.core.hierarchy import Group, Hierarchy

if TYPE_CHECKING:
    from designer.ui.qtmodels.explorer_model import LayerRecord

ROOT = -1


class ScopeTree:
    """``parent[i]``, ``row[i]`` and ``children[i]`` of every row id ``i``; ``group[i]`` is
    the core group of a group row (None for a layer row), ``record[i]`` the layer's record
    (None for a group row), ``count[i]`` the layers shown under a group row."""

    def __init__(
        self,
        hierarchy: Hierarchy,
        shown: dict[int, LayerRecord],
        order: Callable[[LayerRecord], object],
        reverse: bool,
    ) -> None:
        self.hierarchy = hierarchy
        self.parent: list[int] = []
        self.row: list[int] = []
        self.children: dict[int, list[int]] = {ROOT: []}
        self.group: list[Group | None] = []
        self.record: list[LayerRecord | None] = []
        self.count: list[int] = []
        self.where: dict[int, int] = {}  # layer key → row id
        self.by_group: dict[str, int] = {}  # group id → row id
        self._add(hierarchy.root, ROOT, shown, order, reverse)

    def _new(self, parent: int, group: Group | None, record: LayerRecord | None) -> int:
        rid = len(self.parent)
        siblings = self.children[parent]
        self.parent.append(parent)
        self.row.append(len(siblings))
        siblings.append(rid)
        self.group.append(group)
        self.record.append(record)
        self.count.append(0 if record is None else 1)
        if group is not None:
            self.children[rid] = []
            self.by_group[group.id] = rid
        return rid

    def _add(
        self,
        group: Group,
        rid: int,
        shown: dict[int, LayerRecord],
        order: Callable[[LayerRecord], object],
        reverse: bool,
    ) -> int:
        """Add ``group``'s rows under row ``rid``; returns how many layers it shows."""
        total = 0
        for child in group.children:
            cid = self._new(rid, child, None)
            count = self._add(child, cid, shown, order, reverse)
            if count:
                self.count[cid] = count
                total += count
            else:  # nothing shown inside: drop the row again
                self.children[rid].pop()
                self.parent.pop()
                self.row.pop()
                self.group.pop()
                self.record.pop()
                self.count.pop()
                del self.children[cid]
                del self.by_group[child.id]
        records = [r for k in group.own_keys if (r := shown.get(k)) is not None]
        records.sort(key=order, reverse=reverse)  # type: ignore[arg-type]
        for record in records:
            self.where[record.key] = self._new(rid, None, record)
        return total + len(records)

    def is_group(self, rid: int) -> bool:
        return self.record[rid] is None

    def path(self, rid: int) -> list[int]:
        """Row ids from the top level down to ``rid`` (inclusive)."""
        out = []
        while rid != ROOT:
            out.append(rid)
            rid = self.parent[rid]
        out.reverse()
        return out

    def group_data(self, rid: int, column: int, role: int) -> object:
        """What a group row shows: ``name (layers)``, its kind in the Type column (for a
        function call or subgraph holder), op counts and parameters as its tooltip."""
        group = self.group[rid]
        assert group is not None
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return f"{group.name} ({self.count[rid]})"
            if column == 1:
                return "" if group.kind == "scope" else group.kind
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            info = self.hierarchy.info(group)
            return (
                f"{group.id}\n{info.node_count} nodes: {info.op_summary()}\n"
                f"{info.param_count:,} parameters ({info.param_bytes:,} bytes)\n"
                f"{len(info.inputs)} inputs, {len(info.outputs)} outputs"
            )
        return None
