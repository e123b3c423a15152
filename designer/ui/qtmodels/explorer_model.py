"""The Layer Explorer's model (L-3): the layers of one scope as a lazy tree, grouped by
type, by name prefix, by module scope (a tree, see :mod:`designer.ui.qtmodels.scope_tree`)
or not at all, filtered by name, layer type and attribute values.

Rows are computed on demand from plain records (no item objects, no per-row widgets), so
100,000 layers build in well under a second; document events update the records of the
nodes they name instead of re-reading the whole graph.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import onnx
import onnx.helper
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from designer.core.document import ChangeKind, Document, DocumentEvent
from designer.core.hierarchy import Hierarchy, build_hierarchy
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.trt.settings import PRECISION_KEY as _NODE_PRECISION_KEY
from designer.core.trt.settings import node_precision
from designer.core.values import format_value
from designer.ui.qtmodels.scope_tree import ROOT, ScopeTree

Index = QModelIndex | QPersistentModelIndex
KEY_ROLE = int(Qt.ItemDataRole.UserRole) + 1
COLUMNS = ("Name", "Type", "TRT-Prec")
GROUPINGS = ("type", "name", "scope", "none")
PRECISION_ATTRIBUTE = "TRT-Prec"  # the pseudo-attribute advanced filters use for precisions
_PREFIX = re.compile(r"^(.*)[/._][^/._]*$")
_LEAF_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable  # computed once: the
_GROUP_FLAGS = Qt.ItemFlag.ItemIsEnabled  # views ask for flags of every row they lay out


@dataclass(slots=True)
class LayerRecord:
    key: int
    name: str
    op_type: str
    precision: str = ""


@dataclass(frozen=True, slots=True)
class AttributeFilter:
    """Layers having attribute ``name``; with ``value``, whose value text contains it
    (case-insensitive)."""

    name: str
    value: str = ""

    def __str__(self) -> str:
        return f"{self.name} contains '{self.value}'" if self.value else f"has {self.name}"


def name_prefix(name: str) -> str:
    """The group of ``name`` when grouping by name: the part before its last '/', '.' or
    '_' (``block0a_conv`` → ``block0a``, ``/enc/layer.0/MatMul`` → ``/enc/layer.0``)."""
    match = _PREFIX.match(name)
    return match.group(1) if match and match.group(1) else "(no prefix)"


def layer_precisions(model: onnx.ModelProto) -> dict[str, str]:
    """Main-graph node name → TensorRT precision stored on the node (node metadata
    ``onnx_designer.tensorrt.precision``, see :mod:`designer.core.trt.settings`)."""
    return {n.name: p for n in model.graph.node if (p := node_precision(n)) and n.name}


def _precision(node: onnx.NodeProto, main: bool) -> str:
    return (node_precision(node) or "") if main and node.metadata_props else ""


def attribute_text(attr: onnx.AttributeProto) -> str:
    """A short text of an attribute's value for filtering (strings unquoted)."""
    value = onnx.helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, onnx.TensorProto):
        return f"tensor{list(value.dims)}"
    if isinstance(value, onnx.GraphProto):
        return f"graph {value.name}"
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return format_value([v.decode("utf-8", errors="replace") for v in value])
    if isinstance(value, list) and value and not isinstance(value[0], int | float | str):
        return f"{len(value)} items"
    try:
        return format_value(value)
    except TypeError:
        return str(value)


_SORT_KEYS = (
    lambda r: (r.name.lower(), r.name, r.key),
    lambda r: (r.op_type.lower(), r.name.lower(), r.key),
    lambda r: (not r.precision, r.precision, r.name.lower(), r.key),
)


class ExplorerModel(QAbstractItemModel):
    """Group rows (internal id 0) hold layer rows (internal id = group row + 1); without
    grouping there is one hidden group and layer rows sit at the top level."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc: Document | None = None
        self.scope_id: ScopeId = MAIN_SCOPE
        self.records: dict[int, LayerRecord] = {}
        self.grouping = "type"
        self.ascending = True
        self.sort_column = 0  # Name, Type or TRT-Prec (header click)
        self.name_filter = ""
        self.type_filter: frozenset[str] = frozenset()
        self.attribute_filters: tuple[AttributeFilter, ...] = ()
        self._groups: list[tuple[str, list[LayerRecord]]] = []
        self._where: dict[int, tuple[int, int]] = {}
        self._attribute_names: set[str] | None = None
        self._hierarchy: Hierarchy | None = None  # "scope" grouping: built on first use
        self.tree: ScopeTree | None = None  # the rows when grouped by scope

    # --- content ---------------------------------------------------------------------------
    def load(self, doc: Document | None, scope_id: ScopeId = MAIN_SCOPE) -> None:
        """Read every layer of ``doc``'s scope (O(n)); None empties the model."""
        self.doc, self.scope_id = doc, scope_id
        self.records = {}
        self._attribute_names = None
        self._hierarchy = None
        if doc is not None:
            # precisions count on main-graph nodes only; read once per model change
            precisions = doc.node_metadata(scope_id).precisions if scope_id.is_main else {}
            self.records = {
                key: LayerRecord(key, node.name, node.op_type, precisions.get(key, ""))
                for key, node in doc.scope(scope_id).nodes()
            }
        self.regroup()

    def apply_events(self, events: Iterable[DocumentEvent]) -> None:
        """Update after document events: records of the named nodes only, unless the whole
        model changed. One regroup at the end (call with a batch of events)."""
        if self.doc is None:
            return
        keys: set[int] = set()
        for event in events:
            if event.kind == ChangeKind.MODEL:
                self.load(self.doc, self.scope_id)
                return
            if event.kind in (ChangeKind.NODES, ChangeKind.NODE) and event.scope == self.scope_id:
                keys |= event.node_keys
        if not keys:
            return
        try:
            scope = self.doc.scope(self.scope_id)
        except KeyError:
            self.load(None)
            return
        main = self.scope_id.is_main
        unchanged = []
        for key in keys:
            old = self.records.get(key)
            if not scope.has_node(key):
                self.records.pop(key, None)
                continue
            node = scope.node(key)
            if self._attribute_names is not None:
                self._attribute_names.update(a.name for a in node.attribute)
            new = LayerRecord(key, node.name, node.op_type, _precision(node, main))
            same = old is not None and (old.name, old.op_type) == (new.name, new.op_type)
            if same and (self.sort_column != 2 or (old and old.precision) == new.precision):
                unchanged.append(key)
            self.records[key] = new
        if len(unchanged) != len(keys):
            self._hierarchy = None  # names changed: the module scopes may have too
        if len(unchanged) == len(keys) and not self.attribute_filters and self.tree is None:
            for key in unchanged:  # names and types kept: the rows stay where they are
                where = self._where.get(key)
                if where is not None:
                    self._groups[where[0]][1][where[1]] = self.records[key]
                    left = self.index(where[1], 0, self._group_index(where[0]))
                    self.dataChanged.emit(left, left.siblingAtColumn(len(COLUMNS) - 1))
            return
        self.regroup()

    def set_grouping(self, grouping: str) -> None:
        if grouping not in GROUPINGS:
            raise ValueError(f"unknown grouping {grouping!r}")
        self.grouping = grouping
        self.regroup()

    def set_ascending(self, ascending: bool) -> None:
        self.ascending = ascending
        self.regroup()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the layers (within their groups) by Name, Type or TRT-Prec (ascending:
        constrained layers first, by precision)."""
        if not 0 <= column < len(COLUMNS):
            return
        self.sort_column = column
        self.ascending = order == Qt.SortOrder.AscendingOrder
        self.regroup()

    def set_name_filter(self, text: str) -> None:
        self.name_filter = text.strip().lower()
        self.regroup()

    def set_advanced(
        self, types: Iterable[str], attributes: Iterable[AttributeFilter] = ()
    ) -> None:
        chosen, rules = frozenset(types), tuple(dict.fromkeys(attributes))
        if chosen == self.type_filter and rules == self.attribute_filters:
            return  # (a new document resets filters that are mostly unset already)
        self.type_filter, self.attribute_filters = chosen, rules
        self.regroup()

    @property
    def advanced_count(self) -> int:
        """Active advanced filters: the layer-type filter counts one, each attribute one."""
        return (1 if self.type_filter else 0) + len(self.attribute_filters)

    def op_types(self) -> list[str]:
        return sorted({r.op_type for r in self.records.values()})

    def attribute_names(self) -> list[str]:
        """Every attribute name set on a layer of the scope, plus TRT-Prec. Scans the
        layers once per load (about 1 s at 100,000 layers), then adds those of edited
        layers."""
        if self._attribute_names is None:
            names: set[str] = set()
            if self.doc is not None:
                for node in self.doc.scope(self.scope_id).proto.node:
                    for attr in node.attribute:
                        names.add(attr.name)
            self._attribute_names = names
        return [PRECISION_ATTRIBUTE, *sorted(self._attribute_names)]

    def visible_count(self) -> int:
        return len(self.tree.where) if self.tree is not None else len(self._where)

    def hierarchy(self) -> Hierarchy | None:
        """The module-scope groups of the loaded scope (built on first use)."""
        if self._hierarchy is None and self.doc is not None:
            self._hierarchy = build_hierarchy(self.doc, self.scope_id)
        return self._hierarchy

    # --- grouping --------------------------------------------------------------------------
    def _passes(self, record: LayerRecord) -> bool:
        if self.name_filter and self.name_filter not in record.name.lower():
            return False
        if self.type_filter and record.op_type not in self.type_filter:
            return False
        return all(self._attribute_passes(record, f) for f in self.attribute_filters)

    def _attribute_passes(self, record: LayerRecord, rule: AttributeFilter) -> bool:
        wanted = rule.value.strip().lower()
        if rule.name == PRECISION_ATTRIBUTE:
            return bool(record.precision) and wanted in record.precision.lower()
        assert self.doc is not None
        node = self.doc.scope(self.scope_id).node(record.key)
        for attr in node.attribute:
            if attr.name == rule.name:
                return not wanted or wanted in attribute_text(attr).lower()
        return False

    def regroup(self) -> None:
        """Filter, sort and group the records again (O(n log n)); resets the views."""
        self.beginResetModel()
        if self.name_filter or self.type_filter or self.attribute_filters:
            shown = [r for r in self.records.values() if self._passes(r)]
        else:
            shown = list(self.records.values())
        self.tree = None
        hierarchy = self.hierarchy() if self.grouping == "scope" else None
        if hierarchy is not None:
            by_key = {r.key: r for r in shown}
            sort_key = _SORT_KEYS[self.sort_column]
            self.tree = ScopeTree(hierarchy, by_key, sort_key, not self.ascending)
            self._groups, self._where = [], {}
            self.endResetModel()
            return
        shown.sort(key=_SORT_KEYS[self.sort_column], reverse=not self.ascending)
        groups: dict[str, list[LayerRecord]] = {}
        if self.grouping in ("none", "scope"):
            groups[""] = shown
        else:
            by_type = self.grouping == "type"
            for record in shown:
                label = record.op_type if by_type else name_prefix(record.name)
                groups.setdefault(label, []).append(record)
        order = sorted(groups, key=str.lower, reverse=not self.ascending)
        self._groups = [(label, groups[label]) for label in order]
        self._where = {
            r.key: (g, row)
            for g, (_l, rows) in enumerate(self._groups)
            for row, r in enumerate(rows)
        }
        self.endResetModel()

    # --- look-ups --------------------------------------------------------------------------
    @property
    def grouped(self) -> bool:
        return self.grouping != "none"

    def _group_index(self, group: int) -> QModelIndex:
        return self.createIndex(group, 0, 0) if self.grouped else QModelIndex()

    def _tree_index(self, rid: int, column: int = 0) -> QModelIndex:
        if rid == ROOT or self.tree is None:
            return QModelIndex()
        return self.createIndex(self.tree.row[rid], column, rid + 1)

    def index_of_key(self, key: int, column: int = 0) -> QModelIndex:
        """The row of layer ``key`` (invalid when filtered out or unknown)."""
        if self.tree is not None:
            rid = self.tree.where.get(key)
            return QModelIndex() if rid is None else self._tree_index(rid, column)
        where = self._where.get(key)
        if where is None:
            return QModelIndex()
        return self.createIndex(where[1], column, where[0] + 1)

    def rows_of_keys(self, keys: Iterable[int]) -> list[tuple[QModelIndex, int, int]]:
        """(parent, first row, last row) runs covering the visible layers ``keys``."""
        if self.tree is not None:
            tree = self.tree
            rids = sorted(
                (tree.parent[r], tree.row[r]) for k in keys if (r := tree.where.get(k)) is not None
            )
            out: list[tuple[QModelIndex, int, int]] = []
            for parent, row in rids:
                if out and out[-1][2] == row - 1 and out[-1][0] == self._tree_index(parent):
                    out[-1] = (out[-1][0], out[-1][1], row)
                else:
                    out.append((self._tree_index(parent), row, row))
            return out
        spots = sorted(w for k in keys if (w := self._where.get(k)) is not None)
        runs: list[tuple[QModelIndex, int, int]] = []
        for group, row in spots:
            if runs and runs[-1][0] == self._group_index(group) and runs[-1][2] == row - 1:
                runs[-1] = (runs[-1][0], runs[-1][1], row)
            else:
                runs.append((self._group_index(group), row, row))
        return runs

    def key_of(self, index: Index) -> int | None:
        record = self._record(index)
        return record.key if record is not None else None

    def group_label(self, index: Index) -> str | None:
        """The label of a group row (for a scope group: its id, the path joined by '/')."""
        if self.tree is not None:
            rid = index.internalId() - 1 if index.isValid() else ROOT
            group = self.tree.group[rid] if rid != ROOT else None
            return group.id if group is not None else None
        if index.isValid() and self.grouped and index.internalId() == 0:
            return self._groups[index.row()][0]
        return None

    def group_row(self, label: str) -> QModelIndex:
        if self.tree is not None:
            return self._tree_index(self.tree.by_group.get(label, ROOT))
        for row, (name, _records) in enumerate(self._groups):
            if name == label:
                return self.createIndex(row, 0, 0)
        return QModelIndex()

    def _record(self, index: Index) -> LayerRecord | None:
        if self.tree is not None:
            return self.tree.record[index.internalId() - 1] if index.isValid() else None
        if not index.isValid() or index.internalId() == 0:
            return None
        return self._groups[index.internalId() - 1][1][index.row()]

    # --- QAbstractItemModel ----------------------------------------------------------------
    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if column < 0 or column >= len(COLUMNS) or row < 0:
            return QModelIndex()
        if self.tree is not None:
            rows = self.tree.children.get(parent.internalId() - 1 if parent.isValid() else ROOT)
            if rows is None or row >= len(rows):
                return QModelIndex()
            return self.createIndex(row, column, rows[row] + 1)
        if not self.grouped:
            if parent.isValid() or not self._groups or row >= len(self._groups[0][1]):
                return QModelIndex()
            return self.createIndex(row, column, 1)
        if not parent.isValid():
            return self.createIndex(row, column, 0) if row < len(self._groups) else QModelIndex()
        if parent.internalId() != 0 or row >= len(self._groups[parent.row()][1]):
            return QModelIndex()
        return self.createIndex(row, column, parent.row() + 1)

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if self.tree is not None:
            if not index.isValid():
                return QModelIndex()
            return self._tree_index(self.tree.parent[index.internalId() - 1])
        if not index.isValid() or not self.grouped or index.internalId() == 0:
            return QModelIndex()
        return self.createIndex(index.internalId() - 1, 0, 0)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if self.tree is not None:
            if parent.isValid() and parent.column() != 0:
                return 0
            rid = parent.internalId() - 1 if parent.isValid() else ROOT
            return len(self.tree.children.get(rid, ()))
        if not self._groups:
            return 0
        if not parent.isValid():
            return len(self._groups) if self.grouped else len(self._groups[0][1])
        if self.grouped and parent.internalId() == 0 and parent.column() == 0:
            return len(self._groups[parent.row()][1])
        return 0

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        if self.tree is not None:
            return self.rowCount(parent) > 0
        if parent.isValid() and parent.internalId() != 0:
            return False  # a layer row (the common case: asked for every row laid out)
        return self.rowCount(parent) > 0

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        tooltip = role == Qt.ItemDataRole.ToolTipRole
        if orientation == Qt.Orientation.Horizontal and tooltip and section == 2:
            return (
                "TensorRT layer precision constraint (node metadata "
                f"'{_NODE_PRECISION_KEY}'); right-click layers > Set Layer Precision"
            )
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if self.tree is not None:
            return _GROUP_FLAGS if self.tree.is_group(index.internalId() - 1) else _LEAF_FLAGS
        return _GROUP_FLAGS if index.internalId() == 0 else _LEAF_FLAGS

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        record = self._record(index)
        if record is None and self.tree is not None:
            return self.tree.group_data(index.internalId() - 1, index.column(), role)
        if record is None:  # a group row
            label, rows = self._groups[index.row()]
            if role == Qt.ItemDataRole.DisplayRole and index.column() == 0:
                return f"{label} ({len(rows)})"
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return (record.name, record.op_type, record.precision)[index.column()]
        if role == KEY_ROLE:
            return record.key
        if role == Qt.ItemDataRole.ToolTipRole:
            extra = f"\nTensorRT precision: {record.precision}" if record.precision else ""
            return f"{record.name}\n{record.op_type}{extra}\nDouble-click to show it"
        return None
