"""UI test set-up: Qt runs offscreen (set before anything imports Qt)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper


def resnet_model(blocks: int = 2, channels: int = 4) -> onnx.ModelProto:
    """A small ResNet: stem Conv-BN-Relu-MaxPool, ``blocks`` residual blocks
    (Conv-BN-Relu-Conv-BN, Add, Relu), GlobalAveragePool, Flatten, Gemm."""
    rng = np.random.default_rng(0)
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []

    def weight(name: str, shape: tuple[int, ...]) -> str:
        data = (rng.standard_normal(shape) * 0.1).astype(np.float32)
        inits.append(numpy_helper.from_array(data, name))
        return name

    def conv_bn(x: str, name: str, cin: int, relu: bool) -> str:
        w = weight(f"{name}_w", (channels, cin, 3, 3))
        nodes.append(
            helper.make_node("Conv", [x, w], [f"{name}_c"], name=f"{name}_conv", pads=[1, 1, 1, 1])
        )
        bn = [weight(f"{name}_{p}", (channels,)) for p in ("scale", "bias", "mean")]
        inits.append(numpy_helper.from_array(np.ones(channels, np.float32), f"{name}_var"))
        nodes.append(
            helper.make_node(
                "BatchNormalization",
                [f"{name}_c", *bn, f"{name}_var"],
                [f"{name}_bn"],
                name=f"{name}_bn",
            )
        )
        if not relu:
            return f"{name}_bn"
        nodes.append(helper.make_node("Relu", [f"{name}_bn"], [f"{name}_r"], name=f"{name}_relu"))
        return f"{name}_r"

    x = conv_bn("image", "stem", 3, True)
    nodes.append(
        helper.make_node(
            "MaxPool", [x], ["pool"], name="stem_pool", kernel_shape=[2, 2], strides=[2, 2]
        )
    )
    x = "pool"
    for b in range(blocks):
        y = conv_bn(x, f"block{b}a", channels, True)
        y = conv_bn(y, f"block{b}b", channels, False)
        nodes.append(helper.make_node("Add", [x, y], [f"block{b}_sum"], name=f"block{b}_add"))
        nodes.append(
            helper.make_node("Relu", [f"block{b}_sum"], [f"block{b}_out"], name=f"block{b}_relu")
        )
        x = f"block{b}_out"
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="head_gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="head_flatten"))
    fc_w = weight("fc_w", (10, channels))
    fc_b = weight("fc_b", (10,))
    nodes.append(
        helper.make_node("Gemm", ["flat", fc_w, fc_b], ["logits"], name="head_fc", transB=1)
    )
    graph = helper.make_graph(
        nodes,
        "resnet_small",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.fixture
def resnet_path(tmp_path: Path) -> Path:
    """A small ResNet saved as ``resnet.onnx`` in a temporary folder."""
    path = tmp_path / "resnet.onnx"
    onnx.save(resnet_model(), str(path))
    return path


@pytest.fixture
def save_model(tmp_path: Path) -> Callable[[onnx.ModelProto, str], Path]:
    def save(model: onnx.ModelProto, name: str = "model.onnx") -> Path:
        path = tmp_path / name
        onnx.save(model, str(path))
        return path

    return save


@pytest.fixture(autouse=True)
def _drain_thread_pool(qapp):  # type: ignore[no-untyped-def]
    """Let background jobs (type checks, layouts) of a test finish before the next test,
    so none outlives the widgets and sessions it reports to."""
    yield
    from PySide6.QtCore import QCoreApplication, QEvent, QThreadPool
    from PySide6.QtWidgets import QApplication

    while (popup := QApplication.activePopupWidget()) is not None:
        popup.close()  # an open menu must not outlive its test (and its parent widget)
        qapp.processEvents()
    QThreadPool.globalInstance().waitForDone(30_000)
    qapp.processEvents()
    # widgets the test closed are destroyed now, inside this test, not during the next one
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    qapp.processEvents()


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings, recovery copies and caches of every GUI test live in its own tmp folder."""
    monkeypatch.setenv("ONNX_DESIGNER_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("ONNX_DESIGNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    monkeypatch.setenv("ONNX_DESIGNER_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def window(qtbot):  # type: ignore[no-untyped-def]
    """The main window, shown, with error messages collected in ``window.errors`` instead of
    dialogs and documents (and unconfirmed subgraph/function tabs) discarded, not asked
    about, when it closes."""
    from designer.ui.main_window import MainWindow
    from designer.ui.settings import Settings

    win = MainWindow(Settings())
    qtbot.addWidget(win)
    win.errors = []
    win.show_error = lambda title, message: win.errors.append(message)
    win.ask_save_changes = lambda tab: "discard"
    win.ask_confirm_changes = lambda tab: "discard"  # unconfirmed subgraph/function tabs
    win.resize(1400, 900)
    win.show()
    yield win
    for tab in win.document_tabs():
        tab.session.undo_stack.setClean()
    win.close()
