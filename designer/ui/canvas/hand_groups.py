"""View-only groups made by hand on a canvas (:mod:`designer.core.view_groups`): group the
selected nodes under a name (the group is drawn collapsed right away, as one box that
expands, collapses and can be focused like a module scope), and ungroup. Never a model
edit: the model stays byte for byte the same; the groups are saved in the layout file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from designer.core.hierarchy import Hierarchy
from designer.core.view_groups import (
    VIEW_KIND,
    add_view_group,
    constants_feeding_only,
    remove_view_group,
)
from designer.ui.canvas.collapse_view import collapse_group, expand_group, hierarchy_of, redraw

if TYPE_CHECKING:
    from designer.ui.canvas.view import CanvasView


def _rebuild_hierarchy(view: CanvasView) -> tuple[Hierarchy, Hierarchy]:
    """(old, new) hierarchies of the view's scope after its hand groups changed; ids of
    collapsed groups that moved (a module now inside a hand group) follow them."""
    scene = view.canvas
    old = hierarchy_of(scene)
    scene.collapse_hierarchy = None
    new = hierarchy_of(scene)
    if scene.collapsed:
        by_keys = {frozenset(g.keys()): g.id for g in new.groups()}
        moved: set[str] = set()
        for gid in scene.collapsed:
            group = old.by_id.get(gid)
            if group is not None and gid not in new.by_id:
                target = by_keys.get(frozenset(group.keys()))
                if target is not None:
                    moved.add(target)
            elif gid in new.by_id:
                moved.add(gid)
        scene.collapsed = moved
    return old, new


def group_selection(view: CanvasView, name: str) -> str:
    """Make hand group ``name`` of the selected nodes (with the undrawn Constants only they
    read) and draw it collapsed; returns its id.
    Raises ViewGroupError (nothing changed) for a bad name or an empty selection."""
    view.flush()
    scene = view.canvas
    keys = view.selected_keys()
    if not scene.show_constants:  # the Constants only they read go with them, undrawn
        keys += constants_feeding_only(scene.doc, scene.scope_id, keys)
    add_view_group(scene.doc, scene.scope_id, name, keys)
    _old, new = _rebuild_hierarchy(view)
    text = name.strip()
    group = next(g for g in new.groups() if g.kind == VIEW_KIND and g.view_name == text)
    redraw(view)
    collapse_group(view, group.id)
    return group.id


def ungroup(view: CanvasView, group_id: str) -> bool:
    """Drop the hand group ``group_id`` (opened in place first when collapsed): its nodes
    and modules go back where they were in the module tree. False when it is not one."""
    view.flush()
    scene = view.canvas
    group = hierarchy_of(scene).by_id.get(group_id)
    if group is None or group.kind != VIEW_KIND:
        return False
    if group_id in scene.collapsed:
        expand_group(view, group_id)
    if not remove_view_group(scene.doc, scene.scope_id, group.view_name):
        return False
    # the modules collapsed inside it stay collapsed: their ids follow them out of it
    scene.collapsed = scene.collapsed - {group_id}
    _rebuild_hierarchy(view)
    redraw(view)
    return True
