"""What the canvas scene's node items show besides their node: tags over inputs fed by a
proxied graph input or by a stub, problem icons from the type checker's diagnostics, and the
profile or comparison overlay.

:class:`SceneMarks` is a plain mixin of :class:`~designer.ui.canvas.scene.CanvasScene`
(no Qt base class: it only calls methods of built node items). It keeps the marks of every
node, built or not; ``CanvasScene._make_item`` gives a node item its marks when it is built.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtGui import QColor

from designer.core.analysis import CheckResult, Severity
from designer.core.scope import ScopeId
from designer.core.viewgraph import IMPLICIT, ViewEdge
from designer.ui.canvas.items import NodeItem
from designer.ui.canvas.lazy import LazyNodeItems


class SceneMarks:
    """Input tags, problem icons and overlay of the scene's node items."""

    # Set by CanvasScene.__init__ (and kept up to date by the scene).
    scope_id: ScopeId
    node_items: LazyNodeItems
    proxied: dict[int, str]
    stubbed: dict[tuple[int, int], str]
    long_links: set[ViewEdge]
    _tags: dict[int, list[tuple[int, str, bool]]]  # see _set_tags
    _problems: dict[int, tuple[int, str]]
    _overlay: dict[int, tuple[float, str]]  # key -> (heat 0..1, label)
    _overlay_fills: dict[int, QColor]  # comparison overlay colours

    # --- input tags -----------------------------------------------------------------------
    def _set_tags(self, edges: Iterable[ViewEdge], clear: Iterable[int] = ()) -> None:
        """Graph-input proxies and stubs above the inputs they feed: (slot, tensor, stub)."""
        tags: dict[int, list[tuple[int, str, bool]]] = {key: [] for key in clear}
        proxied, stubbed, long_links = self.proxied, self.stubbed, self.long_links
        if not (proxied or stubbed or long_links) and not tags:
            return  # nothing to tag (is_stub inlined below: this loop sees every link)
        sources = proxied.keys() | {key for key, _slot in stubbed}
        for edge in edges:
            if edge.source not in sources and not (long_links and edge in long_links):
                continue  # (the common case, decided on one int)
            slot = edge.target_index
            if slot == IMPLICIT:  # read inside a subgraph: no input slot to put a tag over
                continue
            name = proxied.get(edge.source)
            if name is not None:
                tags.setdefault(edge.target, []).append((slot, name, False))
            elif (edge.source, edge.source_index) in stubbed or edge in long_links:
                tags.setdefault(edge.target, []).append((slot, edge.tensor, True))
        built, stored = self.node_items.built, self._tags
        for key, entries in tags.items():
            if entries:
                stored[key] = entries
            else:
                stored.pop(key, None)
            item = built.get(key)
            if item is not None and (entries or item.tags):
                item.set_tags(entries)

    # --- diagnostics ----------------------------------------------------------------------
    def set_check_result(self, result: CheckResult | None) -> None:
        """Problem icons from the type checker's diagnostics (only changed items repaint)."""
        problems: dict[int, tuple[int, list[str]]] = {}
        for d in result.diagnostics if result is not None else ():
            if d.node_key is None or d.scope != self.scope_id or d.severity < Severity.WARNING:
                continue
            level, texts = problems.setdefault(d.node_key, (0, []))
            texts.append(f"{d.severity.label}: {d.message}")
            problems[d.node_key] = (max(level, 2 if d.severity >= Severity.ERROR else 1), texts)
        new = {k: (lvl, "\n".join(t[:6])) for k, (lvl, t) in problems.items()}
        touched = set(new) | set(self._problems)
        self._problems = new
        built = self.node_items.built
        self._apply_problems({k: built[k] for k in touched if k in built})

    def _apply_problems(self, items: dict[int, NodeItem]) -> None:
        for key, item in items.items():
            level, text = self._problems.get(key, (0, ""))
            item.set_problem(level, text)

    # --- profile overlay ------------------------------------------------------------------
    def set_overlay(self, shares: dict[int, float] | None) -> None:
        """Tint nodes by their share of time (key -> 0..1); colours are relative to the
        hottest node, labels show the share itself. None (or empty) clears the overlay."""
        touched = set(self._overlay)
        self._overlay, self._overlay_fills = {}, {}
        if shares:
            top = max(shares.values()) or 1.0
            self._overlay = {k: (v / top, f"{100.0 * v:.1f}%") for k, v in shares.items()}
        touched |= set(self._overlay)
        built = self.node_items.built
        self._apply_overlay({k: built[k] for k in touched if k in built})

    def set_diff_overlay(self, changes: dict[int, tuple[float, str]] | None) -> None:
        """Comparison overlay: key -> (change -1..1, label); faster (negative) green, slower
        (positive) red, the strength by the size of the change. None clears it."""
        from designer.ui.canvas.items import diff_color

        touched = set(self._overlay)
        self._overlay = {k: (abs(c), label) for k, (c, label) in (changes or {}).items()}
        self._overlay_fills = {k: diff_color(c) for k, (c, _l) in (changes or {}).items()}
        touched |= set(self._overlay)
        built = self.node_items.built
        self._apply_overlay({k: built[k] for k in touched if k in built})

    def _apply_overlay(self, items: dict[int, NodeItem]) -> None:
        for key, item in items.items():
            heat, label = self._overlay.get(key, (-1.0, ""))
            item.set_heat(heat, label, self._overlay_fills.get(key))

    def overlay_keys(self) -> set[int]:
        return set(self._overlay)

    def problem_keys(self) -> set[int]:
        return set(self._problems)
