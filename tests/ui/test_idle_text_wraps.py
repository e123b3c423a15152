"""A dock's text for a tab that is no model ("“…” is not a model tab (1 model open): switch
to one to see its layers") wraps: on one line it widened the window by 200–500 px when a
report, engine or Compare tab came to the front, and the window stayed wider."""

from __future__ import annotations

from helpers.engine_fixtures import A100_FP16
from helpers.gui import open_model
from helpers.shared import model
from pytestqt.qtbot import QtBot

from designer.ui.main_window import MainWindow


def test_a_non_model_tab_leaves_the_window_its_width(window: MainWindow, qtbot: QtBot) -> None:
    window.resize(1400, 900)
    window.show()
    open_model(window, model("squeezenet1_0.torchscript.onnx"), qtbot)
    qtbot.wait(50)
    width = window.width()
    window.open_files([A100_FP16])  # an engine tab in front of the model
    assert window.tab() is None  # the engine tab is current
    qtbot.wait(100)
    assert window.width() == width
