"""Pasting copied nodes never binds them to the target's weights by accident: a copied
initializer whose name the target uses for a different tensor is added under a fresh name
(the pasted nodes read it), an identical one is reused, and undo takes everything back."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
from helpers.gui import open_model
from onnx import TensorProto, helper, numpy_helper
from pytestqt.qtbot import QtBot

from designer.core.document import Document
from designer.core.edits import Edit
from designer.core.io.external import tensor_array
from designer.core.io.load import open_document
from designer.core.scope import MAIN_SCOPE
from designer.ui.canvas.clipboard import copy_nodes, paste_edit, same_tensor
from designer.ui.document_tab import DocumentTab
from designer.ui.main_window import MainWindow

MODELS = Path(__file__).resolve().parents[2] / ".." / "shared" / "models"
BERT = MODELS / "bert_4l_h64.torchscript.onnx"
T5 = MODELS / "t5enc_4l_h64.torchscript.onnx"
QUERY = "/m/encoder/layer.0/attention/self/query/MatMul"
WEIGHT = "onnx::MatMul_550"  # in both exports, same shape, different values


def _weight(model: onnx.ModelProto, name: str) -> np.ndarray:
    return numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == name))


def _initializer(model: onnx.ModelProto, name: str) -> onnx.TensorProto:
    tensor: onnx.TensorProto = next(t for t in model.graph.initializer if t.name == name)
    return tensor


def _copy(window: MainWindow, tab: DocumentTab, names: list[str]) -> None:
    by_name = {n.name: k for k, n in tab.session.doc.scope().nodes()}
    window.tabs.setCurrentWidget(tab)
    tab.view.select_keys([by_name[n] for n in names])
    window.actions_by_name["copy"].trigger()


def _paste(window: MainWindow, tab: DocumentTab) -> onnx.NodeProto:
    window.tabs.setCurrentWidget(tab)
    count = len(tab.session.doc.model.graph.node)
    window.actions_by_name["paste"].trigger()
    nodes = tab.session.doc.model.graph.node
    assert len(nodes) == count + 1
    node: onnx.NodeProto = nodes[-1]
    return node


def test_bert_matmul_pasted_into_t5_reads_berts_weight(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    t5_path = tmp_path / T5.name
    shutil.copy(T5, t5_path)
    bert = open_model(window, BERT, qtbot)
    t5 = open_model(window, t5_path, qtbot)
    bert_weight = _weight(bert.session.doc.model, WEIGHT)
    t5_tensor = onnx.TensorProto()
    t5_tensor.CopyFrom(_initializer(t5.session.doc.model, WEIGHT))
    assert not np.array_equal(bert_weight, numpy_helper.to_array(t5_tensor))
    before = t5.session.doc.model.SerializeToString()
    steps = t5.session.undo_stack.count()

    _copy(window, bert, [QUERY])
    pasted = _paste(window, t5)
    model = t5.session.doc.model
    assert pasted.input[1] != WEIGHT  # a fresh name, not T5's tensor
    assert np.array_equal(_weight(model, pasted.input[1]), bert_weight)
    assert _initializer(model, WEIGHT) == t5_tensor  # T5's own weight is untouched
    assert t5.session.undo_stack.count() == steps + 1  # one undo step

    # the same node again: the weight pasted a moment ago is identical, so it is shared
    count = len(model.graph.initializer)
    again = _paste(window, t5)
    assert again.input[1] == pasted.input[1]
    assert len(model.graph.initializer) == count

    t5.session.undo_stack.undo()
    t5.session.undo_stack.undo()
    assert t5.session.doc.model.SerializeToString() == before
    assert window.errors == []  # type: ignore[attr-defined]  # the fixture's


def test_identical_weight_is_reused_not_duplicated(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    """Within the same model, and into a copy of it in another folder (equal bytes)."""
    other_path = tmp_path / BERT.name
    shutil.copy(BERT, other_path)
    bert = open_model(window, BERT, qtbot)
    other = open_model(window, other_path, qtbot)
    for tab in (bert, other):
        _copy(window, bert, [QUERY])
        count = len(tab.session.doc.model.graph.initializer)
        before = tab.session.doc.model.SerializeToString()
        pasted = _paste(window, tab)
        assert pasted.input[1] == WEIGHT
        assert len(tab.session.doc.model.graph.initializer) == count
        tab.session.undo_stack.undo()
        assert tab.session.doc.model.SerializeToString() == before


def test_weight_with_a_dotted_name_is_pasted_under_an_identifier(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    """BERT's 'm.embeddings.LayerNorm.bias' is no C90 identifier (AddInitializer refuses
    such names), and T5 has no such tensor: it is pasted as 'm_embeddings_LayerNorm_bias'."""
    t5_path = tmp_path / T5.name
    shutil.copy(T5, t5_path)
    bert = open_model(window, BERT, qtbot)
    t5 = open_model(window, t5_path, qtbot)
    name = "m.embeddings.LayerNorm.bias"
    reader = next(n.name for n in bert.session.doc.model.graph.node if name in n.input)
    _copy(window, bert, [reader])
    pasted = _paste(window, t5)
    index = list(next(n for n in bert.session.doc.model.graph.node if n.name == reader).input)
    new = pasted.input[index.index(name)]
    assert new == "m_embeddings_LayerNorm_bias"
    assert np.array_equal(_weight(t5.session.doc.model, new), _weight(bert.session.doc.model, name))
    assert window.errors == []  # type: ignore[attr-defined]  # the fixture's


# --- the core of it, on small models --------------------------------------------------------
def _model(values: np.ndarray, name: str = "w") -> onnx.ModelProto:
    node = helper.make_node("Add", ["x", name], ["y"], name="add")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(values.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(values.shape))],
        [numpy_helper.from_array(values, name)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _external(folder: Path, values: np.ndarray, file: str = "w.bin") -> Document:
    """A model in ``folder`` whose initializer 'w' lives in ``folder/file``."""
    folder.mkdir()
    model = _model(values)
    onnx.save_model(
        model,
        folder / "m.onnx",
        save_as_external_data=True,
        location=file,
        size_threshold=0,
    )
    doc = open_document(folder / "m.onnx")
    assert doc.model.graph.initializer[0].data_location == TensorProto.EXTERNAL
    return doc


def _paste_add(src: Document, dst: Document) -> tuple[onnx.NodeProto, Edit]:
    """Copy node 'add' of ``src``, paste it into ``dst``: the pasted node and the edit."""
    key = next(k for k, n in src.scope().nodes() if n.name == "add")
    edit, _adds = paste_edit(dst, MAIN_SCOPE, copy_nodes(src, MAIN_SCOPE, [key]), (0.0, 0.0))
    edit.apply(dst)
    return dst.model.graph.node[-1], edit


def _values(doc: Document, name: str) -> np.ndarray:
    return np.array(tensor_array(_initializer(doc.model, name), doc.base_dir))


def test_external_weights_from_another_folder_with_the_same_file_name(tmp_path: Path) -> None:
    """Both models keep 'w' in a 'w.bin' of their own folder; the copied one is read into the
    pasted tensor (its file is relative to the source), under a fresh name."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    src = _external(tmp_path / "a", a)
    dst = _external(tmp_path / "b", -a)
    before = dst.model.SerializeToString()
    pasted, edit = _paste_add(src, dst)
    assert pasted.input[1] == "w_1"
    tensor = _initializer(dst.model, "w_1")
    assert tensor.data_location != TensorProto.EXTERNAL
    assert np.array_equal(_values(dst, "w_1"), a)
    assert np.array_equal(_values(dst, "w"), -a)
    edit.revert(dst)
    assert dst.model.SerializeToString() == before


def test_external_weights_reused_when_equal(tmp_path: Path) -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    src = _external(tmp_path / "a", a)
    same_bytes = _external(tmp_path / "b", a, file="other.bin")
    for dst in (src, same_bytes):  # the same file range; equal bytes in another file
        count = len(dst.model.graph.initializer)
        assert _paste_add(src, dst)[0].input[1] == "w"
        assert len(dst.model.graph.initializer) == count


def test_same_tensor_compares_type_shape_and_bytes(tmp_path: Path) -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = numpy_helper.from_array(a, "w")
    as_floats = helper.make_tensor("other", TensorProto.FLOAT, [2, 3], a.ravel().tolist())
    assert same_tensor(t, None, as_floats, None)  # raw_data vs float_data, same values
    assert not same_tensor(t, None, numpy_helper.from_array(a.reshape(3, 2), "w"), None)
    assert not same_tensor(t, None, numpy_helper.from_array(a.astype(np.float64), "w"), None)
    zero, minus_zero = (numpy_helper.from_array(np.array([v], np.float32)) for v in (0.0, -0.0))
    assert not same_tensor(zero, None, minus_zero, None)  # bits, not ==
    doc = _external(tmp_path / "a", a)
    assert same_tensor(t, None, doc.model.graph.initializer[0], doc.base_dir)
    assert not same_tensor(t, None, doc.model.graph.initializer[0], None)  # unreadable


def test_different_shape_under_a_taken_name_gets_a_fresh_one() -> None:
    src = Document(_model(np.ones((2, 3), np.float32)))
    dst = Document(_model(np.ones((3,), np.float32)))
    pasted, _edit = _paste_add(src, dst)
    assert pasted.input[1] == "w_1"
    assert _values(dst, "w_1").shape == (2, 3)
    assert pasted.input[0] == "x"  # a non-weight input of that name still binds by name


def test_a_copied_node_takes_the_hidden_constant_it_reads(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    """Constants are not drawn (by default), so selecting a Reshape selects it alone; the
    copy still takes the Constant holding its shape, and the pasted Reshape reads the pasted
    Constant, not the target's value of that name or nothing."""
    gpt2 = open_model(window, MODELS / "gpt2_6l_h64.torchscript.onnx", qtbot)
    scope = gpt2.session.doc.scope()
    makers = {o: n for _k, n in scope.nodes() for o in n.output}
    reshape = next(
        n
        for _k, n in scope.nodes()
        if n.op_type == "Reshape" and makers.get(n.input[1], onnx.NodeProto()).op_type == "Constant"
    )
    shape = numpy_helper.to_array(makers[reshape.input[1]].attribute[0].t)
    bert_path = tmp_path / BERT.name
    shutil.copy(BERT, bert_path)
    bert = open_model(window, bert_path, qtbot)
    _copy(window, gpt2, [reshape.name])
    window.tabs.setCurrentWidget(bert)
    nodes = bert.session.doc.model.graph.node
    count = len(nodes)
    window.actions_by_name["paste"].trigger()
    assert len(nodes) == count + 2
    pasted = next(n for n in nodes[count:] if n.op_type == "Reshape")
    constant = next(n for n in nodes[count:] if n.op_type == "Constant")
    assert pasted.input[1] == constant.output[0]
    assert np.array_equal(numpy_helper.to_array(constant.attribute[0].t), shape)
    assert window.errors == []  # type: ignore[attr-defined]  # the fixture's


_COPY_AND_EXIT = """
import sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
from designer.ui.main_window import MainWindow
from designer.ui.settings import Settings

app = QApplication(sys.argv)
window = MainWindow(Settings())
window.show()
window.open_files([Path(sys.argv[1])])
tab = window.tab()
assert tab is not None and tab.view.wait_for_layout(30_000)
tab.view.select_keys(list(tab.session.doc.scope().keys)[:2])
window.actions_by_name["copy"].trigger()
assert QApplication.clipboard().mimeData().formats()
tab.session.undo_stack.setClean()
window.close()
print("copied")
"""


def test_the_process_exits_cleanly_after_a_copy(tmp_path: Path) -> None:
    """PySide6 6.11 crashed the process at its end (exit 139, after the summary of a test
    run) when the clipboard still held the copied nodes; they are taken off it at exit."""
    import os
    import subprocess
    import sys

    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "ONNX_DESIGNER_CONFIG_DIR": str(tmp_path / "config"),
        "ONNX_DESIGNER_RECOVERY_DIR": str(tmp_path / "recovery"),
        "ONNX_DESIGNER_CACHE_DIR": str(tmp_path / "cache"),
    }
    example = Path(__file__).resolve().parents[2] / "resources" / "examples" / "tiny_cnn.onnx"
    result = subprocess.run(
        [sys.executable, "-c", _COPY_AND_EXIT, str(example)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert "copied" in result.stdout, result.stderr
    assert result.returncode == 0, result.stderr[-2000:]
