"""Edit > Group into Local Function… and Edit > Inline Function Call on a real model:
the outputs stay the same in ONNX Runtime, undo restores, inline gives the original back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from PySide6.QtCore import QPointF

from designer.core.document import Document
from designer.ui.tools import functions as tool

GROUPED = ("block0a_conv", "block0a_bn", "block0a_relu")


def run(model: onnx.ModelProto, image: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (logits,) = session.run(None, {"image": image})
    return np.asarray(logits)


def keys_named(doc: Document, names: tuple[str, ...]) -> list[int]:
    by_name = {node.name: key for key, node in doc.scope().nodes()}
    return [by_name[n] for n in names]


def select(window, qtbot, keys: list[int]) -> None:  # type: ignore[no-untyped-def]
    view = window.current_view()
    view.select_keys(keys)
    qtbot.waitUntil(lambda: sorted(view.selected_keys()) == sorted(keys))
    qtbot.wait(10)  # the window's selectionChanged comes on the next event-loop turn


def test_group_three_nodes_then_undo_and_inline(window, resnet_path: Path, monkeypatch, qtbot):  # type: ignore[no-untyped-def]
    original = onnx.load(str(resnet_path))
    image = np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype(np.float32)
    expected = run(original, image)
    window.open_files([resnet_path])
    tab = window.tab()
    doc = tab.session.doc
    group = window.actions_by_name["group_into_function"]
    inline = window.actions_by_name["inline_function_call"]
    assert not group.isEnabled() and not inline.isEnabled()

    select(window, qtbot, keys_named(doc, GROUPED))
    qtbot.waitUntil(group.isEnabled)
    assert not inline.isEnabled()  # not a call node
    asked: list[int] = []

    def names(_parent, _doc, count):  # type: ignore[no-untyped-def]
        asked.append(count)
        return "ConvBnRelu", "local"

    monkeypatch.setattr(tool, "ask_group_names", names)
    group.trigger()
    assert asked == [3]
    assert not window.errors
    nodes = list(doc.model.graph.node)
    assert len(nodes) == len(original.graph.node) - 2
    calls = [n for n in nodes if n.op_type == "ConvBnRelu"]
    assert len(calls) == 1 and calls[0].domain == "local"
    assert [f.name for f in doc.model.functions] == ["ConvBnRelu"]
    call_key = keys_named(doc, (calls[0].name,))[0]
    assert tab.view.selected_keys() == [call_key]
    onnx.checker.check_model(doc.model, full_check=True)
    np.testing.assert_allclose(run(doc.model, image), expected, rtol=1e-5, atol=1e-6)

    window.actions_by_name["undo"].trigger()
    assert doc.model == original
    window.actions_by_name["redo"].trigger()
    assert len(doc.model.functions) == 1

    tab.view.flush()
    call_key = keys_named(doc, (calls[0].name,))[0]
    select(window, qtbot, [call_key])
    qtbot.waitUntil(inline.isEnabled)
    assert group.isEnabled()  # one node can be grouped too
    inline.trigger()
    assert not window.errors
    assert doc.model == original
    assert len(tab.view.selected_keys()) == 3  # the inlined body ends selected
    window.actions_by_name["undo"].trigger()
    assert len(doc.model.functions) == 1


def test_actions_are_in_the_canvas_menu(window, resnet_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.open_files([resnet_path])
    tab = window.tab()
    select(window, qtbot, keys_named(tab.session.doc, ("stem_relu",)))
    menu = window.canvas_menu(tab, QPointF(0, 0))
    actions = {a.text(): a for a in menu.actions()}
    assert actions["&Group into Local Function…"].isEnabled()
    assert not actions["&Inline Function Call"].isEnabled()
    menu.deleteLater()


def test_group_dialog_refuses_a_taken_name(window, save_model) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers.models import function_model

    window.open_files([save_model(function_model(), "fn.onnx")])
    dialog = tool.GroupDialog(window.tab().session.doc, 2, window)
    dialog.domain_edit.setText("local.fn")
    dialog.name_edit.setText("ScaledAdd")
    dialog.accept()
    assert "already exists" in dialog.error.text()
    dialog.name_edit.setText("my-group")
    dialog.accept()
    assert "contains '-'" in dialog.error.text()
    dialog.name_edit.setText("Fresh")
    dialog.accept()
    assert dialog.result() == dialog.DialogCode.Accepted


def test_grouping_is_refused_with_the_reason(window, resnet_path: Path, monkeypatch, qtbot):  # type: ignore[no-untyped-def]
    """Graph input pseudo-nodes in the selection are left out; a refusal of the core edit
    is shown with its reason and changes nothing."""
    window.open_files([resnet_path])
    doc = window.tab().session.doc
    before = doc.model.SerializeToString()
    image = doc.io_key(window.tab().view.scope_id, "input", "image")
    select(window, qtbot, [*keys_named(doc, ("stem_conv",)), image])
    asked: list[int] = []

    def names(_parent, _doc, count):  # type: ignore[no-untyped-def]
        asked.append(count)
        return "Stem", ""  # the default (ai.onnx) domain cannot hold a local function

    monkeypatch.setattr(tool, "ask_group_names", names)
    assert tool.group_selection(window) is None
    assert asked == [1]
    assert len(window.errors) == 1 and window.errors[0]
    assert doc.model.SerializeToString() == before
    assert not window.tab().session.undo_stack.canUndo()


def test_group_inside_a_function_tab_goes_to_the_model(window, save_model, monkeypatch, qtbot):  # type: ignore[no-untyped-def]
    """In a local function's tab (a working copy) the new function is added to the model
    itself, the tab follows at once, and the model computes the same."""
    from designer.core.scope import ScopeId
    from tests.helpers.models import FN_DOMAIN, function_model

    original = function_model()
    x = np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32)

    def outputs(model: onnx.ModelProto) -> np.ndarray:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return np.asarray(sess.run(None, {"X": x})[0])

    window.open_files([save_model(original, "fn.onnx")])
    model_tab = window.tab()
    root = model_tab.session
    fid = (FN_DOMAIN, "ScaledAdd", "")
    fn_tab = window.open_scope(root, ScopeId(function=fid))
    assert fn_tab is not None and window.tab() is fn_tab
    copy = fn_tab.session
    select(window, qtbot, keys_named_in(copy.doc, ScopeId(function=fid), ("fn_add", "fn_mul")))
    monkeypatch.setattr(tool, "ask_group_names", lambda *_a: ("AddMul", "local"))
    call_key = tool.group_selection(window)
    assert call_key is not None and not window.errors
    assert [f.name for f in root.doc.model.functions] == ["ScaledAdd", "AddMul"]
    assert [f.name for f in copy.doc.model.functions] == ["ScaledAdd", "AddMul"]
    assert not copy.has_unconfirmed and root.undo_stack.canUndo()
    assert fn_tab.view.selected_keys() == [call_key]
    np.testing.assert_allclose(outputs(root.doc.model), outputs(original), rtol=1e-6)
    root.undo_stack.undo()
    assert root.doc.model == original


def test_group_refused_while_a_tab_has_unconfirmed_edits(window, save_model, monkeypatch, qtbot):  # type: ignore[no-untyped-def]
    from designer.core.edits import RenameNode
    from designer.core.scope import ScopeId
    from tests.helpers.models import FN_DOMAIN, function_model

    window.ask_confirm_changes = lambda tab: "discard"  # closing the window must not ask
    window.open_files([save_model(function_model(), "fn.onnx")])
    root = window.tab().session
    sid = ScopeId(function=(FN_DOMAIN, "ScaledAdd", ""))
    fn_tab = window.open_scope(root, sid)
    copy = fn_tab.session
    (mul,) = keys_named_in(copy.doc, sid, ("fn_mul",))
    assert copy.push(RenameNode(sid, mul, "fn_mul2"))
    before = root.doc.model.SerializeToString()
    select(window, qtbot, keys_named_in(copy.doc, sid, ("fn_add",)))
    monkeypatch.setattr(tool, "ask_group_names", lambda *_a: ("JustAdd", "local"))
    assert tool.group_selection(window) is None
    assert len(window.errors) == 1 and "unconfirmed" in window.errors[0]
    assert root.doc.model.SerializeToString() == before
    assert copy.has_unconfirmed


def keys_named_in(doc: Document, scope_id, names: tuple[str, ...]) -> list[int]:  # type: ignore[no-untyped-def]
    by_name = {node.name: key for key, node in doc.scope(scope_id).nodes()}
    return [by_name[n] for n in names]


def test_group_takes_the_hidden_constants_only_its_nodes_read(  # type: ignore[no-untyped-def]
    window, tmp_path: Path, monkeypatch, qtbot
):
    """A layer grouped with Constants hidden left its 13 Constants outside: each became an
    input of the function (21 of 39 inputs), and the result depended on a view setting."""
    import shutil

    from helpers.shared import model as shared_model

    path = tmp_path / "bert.onnx"
    shutil.copy(shared_model("bert_4l_h64.torchscript.onnx"), path)
    original = onnx.load(str(path))
    window.open_files([path])
    tab = window.tab()
    doc = tab.session.doc
    layer = [k for k, n in doc.scope().nodes() if n.name.startswith("/m/encoder/layer.1/")]
    constants = {k for k in layer if doc.scope().node(k).op_type == "Constant"}
    names = {doc.scope().node(k).name for k in constants}
    assert constants  # hidden on the canvas: not selectable there
    drawn = [k for k in layer if k not in constants]
    select(window, qtbot, drawn)
    monkeypatch.setattr(tool, "ask_group_names", lambda *_a: ("Layer1", "local"))
    window.actions_by_name["group_into_function"].trigger()
    assert not window.errors
    (fn,) = [f for f in doc.model.functions if f.name == "Layer1"]
    body_constants = {n.name for n in fn.node if n.op_type == "Constant"}
    assert names <= body_constants  # (and those of other names only the layer reads)
    assert not [i for i in fn.input if "Constant" in i]
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 100, (1, 8)).astype(np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}

    def outputs(model: onnx.ModelProto) -> list[np.ndarray]:
        opts = ["CPUExecutionProvider"]
        return ort.InferenceSession(model.SerializeToString(), providers=opts).run(None, feeds)

    for got, want in zip(outputs(doc.model), outputs(original), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
