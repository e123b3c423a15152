"""File pickers of the TensorRT form (:class:`designer.ui.dialogs.trt_form.TrtForm`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog, QLineEdit

if TYPE_CHECKING:
    from designer.ui.dialogs.trt_form import TrtForm

ENGINES = "TensorRT engines (*.engine *.plan *.trt)"


def save_name(form: TrtForm, title: str, edit: QLineEdit, filters: str) -> None:
    start = edit.text() or edit.placeholderText()
    name, _ = QFileDialog.getSaveFileName(form, title, start, filters)
    if name:
        edit.setText(name)


def browse_model(form: TrtForm) -> None:
    name, _ = QFileDialog.getOpenFileName(
        form, "ONNX Model", form.model.text(), "ONNX models (*.onnx);;All files (*)"
    )
    if name:
        form.set_model(Path(name))


def browse_engine(form: TrtForm) -> None:
    save_name(form, "Engine File", form.engine, ENGINES)


def browse_layer_info(form: TrtForm) -> None:
    save_name(form, "Engine Metadata", form.layer_info, "JSON (*.json)")


def browse_profile(form: TrtForm) -> None:
    save_name(form, "Profile File", form.profile_out, "JSON (*.json)")


def browse_calib(form: TrtForm) -> None:
    name, _ = QFileDialog.getOpenFileName(form, "Calibration Cache", form.calib.text())
    if name:
        form.calib.setText(name)


def browse_prebuilt(form: TrtForm) -> None:
    name, _ = QFileDialog.getOpenFileName(
        form, "Prebuilt Engine", form.prebuilt.text(), f"{ENGINES};;All files (*)"
    )
    if name:
        form.prebuilt.setText(name)
        form.use_engine.setChecked(True)
