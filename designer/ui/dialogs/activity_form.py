"""The options of an ONNX Runtime profiling run (SPEC R-1) as a form: model, iterations,
warm-up, execution provider, optimization, threads, random inputs with per-dimension values
or an input folder, and the output profile path."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from designer.activities.numerics import free_dims
from designer.activities.runner import CPU, OrtProfileOptions, default_profile_path
from designer.core.errors import DesignerError
from designer.ui.jobs import start_job_with


def free_dimensions(path: Path) -> list[str]:
    """Named free dimensions (``dim_param``) of the graph inputs, in order of appearance.
    Reads the model without external data (cost: one protobuf parse)."""
    import onnx

    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:
        raise DesignerError(f"{path}: not a readable ONNX model ({exc})") from None
    return free_dims(model)


def _path_row(edit: QLineEdit, browse: QPushButton) -> QHBoxLayout:
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(browse)
    return row


class ProfileForm(QWidget):
    """Builds :class:`OrtProfileOptions` from the user's choices (:meth:`options`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._dims_generation = 0
        self.model = QLineEdit()
        self.model.setPlaceholderText("path of the .onnx file to profile")
        self.model.editingFinished.connect(self._model_changed)
        browse_model = QPushButton("Browse…")
        browse_model.clicked.connect(self._browse_model)
        self.iterations = QSpinBox()
        self.iterations.setRange(1, 1_000_000)
        self.iterations.setValue(10)
        self.warmup = QSpinBox()
        self.warmup.setRange(0, 100_000)
        self.warmup.setValue(1)
        self.warmup.setToolTip("Runs before the measured iterations, excluded from statistics")
        self.provider = QComboBox()
        self.provider.setToolTip("Execution providers the target's onnxruntime offers")
        self.optimize = QCheckBox("Enable all graph optimizations (ORT_ENABLE_ALL)")
        self.threads = QSpinBox()
        self.threads.setRange(0, 1024)
        self.threads.setSpecialValueText("default")
        self.random = QRadioButton("Random data")
        self.random.setChecked(True)
        self.folder_choice = QRadioButton("TensorProto .pb files from a folder")
        self.random.toggled.connect(lambda _on: self._inputs_changed())
        self.dims = QTableWidget(0, 2)
        self.dims.setHorizontalHeaderLabels(["Free dimension", "Value"])
        self.dims.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.dims.verticalHeader().setVisible(False)
        self.no_dims = QLabel("The model's inputs have no named free dimensions.")
        self.no_dims.setStyleSheet("color:#5c6370")
        self.folder = QLineEdit()
        self.folder.setPlaceholderText("one <input name>.pb per input")
        browse_folder = QPushButton("Browse…")
        browse_folder.clicked.connect(self._browse_folder)
        self.browse_folder = browse_folder
        self.output = QLineEdit()
        browse_output = QPushButton("Browse…")
        browse_output.clicked.connect(self._browse_output)
        inputs = QHBoxLayout()
        inputs.addWidget(self.random)
        inputs.addWidget(self.folder_choice)
        inputs.addStretch(1)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("ONNX model:", _path_row(self.model, browse_model))
        form.addRow("Iterations:", self.iterations)
        form.addRow("Warm-up runs:", self.warmup)
        form.addRow("Execution provider:", self.provider)
        form.addRow("Optimization:", self.optimize)
        form.addRow("Intra-op threads:", self.threads)
        form.addRow("Inputs:", inputs)
        form.addRow("", self.dims)
        form.addRow("", self.no_dims)
        form.addRow("Input folder:", _path_row(self.folder, browse_folder))
        form.addRow("Output profile:", _path_row(self.output, browse_output))
        self.set_providers([CPU])
        self._inputs_changed()
        self._show_dims([])

    # --- model --------------------------------------------------------------------------------
    def model_path(self) -> Path | None:
        text = self.model.text().strip()
        return Path(text).expanduser() if text else None

    def set_model(self, path: Path) -> None:
        self.model.setText(str(path))
        self._model_changed()

    def _model_changed(self) -> None:
        path = self.model_path()
        self.output.setPlaceholderText(str(default_profile_path(path)) if path else "")
        if path is None or not path.is_file():
            self._show_dims([])
            return
        self._dims_generation += 1
        generation = self._dims_generation
        start_job_with(
            lambda _r, _c: free_dimensions(path),
            self,
            finished=lambda names: self._dims_read(generation, names),
            failed=lambda _text: self._dims_read(generation, []),
        )

    def _dims_read(self, generation: int, names: list[str]) -> None:
        if generation == self._dims_generation:
            self._show_dims(names)

    def _show_dims(self, names: list[str]) -> None:
        self.dims.setRowCount(len(names))
        for row, name in enumerate(names):
            item = QTableWidgetItem(name)
            item.setFlags(item.flags() & ~item.flags().ItemIsEditable)
            self.dims.setItem(row, 0, item)
            spin = QSpinBox()
            spin.setRange(1, 1 << 30)
            spin.setValue(1)
            self.dims.setCellWidget(row, 1, spin)
        header = self.dims.horizontalHeader().height() or 24
        rows = sum(self.dims.rowHeight(r) for r in range(min(len(names), 4)))
        self.dims.setFixedHeight(header + rows + 4)
        self._inputs_changed()

    def dim_values(self) -> dict[str, int]:
        values = {}
        for row in range(self.dims.rowCount()):
            spin = self.dims.cellWidget(row, 1)
            assert isinstance(spin, QSpinBox)
            name = self.dims.item(row, 0)
            if name is not None:
                values[name.text()] = spin.value()
        return values

    def _inputs_changed(self) -> None:
        random = self.random.isChecked()
        self.dims.setVisible(random and self.dims.rowCount() > 0)
        self.no_dims.setVisible(random and self.dims.rowCount() == 0)
        self.folder.setEnabled(not random)
        self.browse_folder.setEnabled(not random)

    def set_providers(self, providers: list[str]) -> None:
        current = self.provider.currentText()
        self.provider.clear()
        ordered = [CPU] + [p for p in providers if p != CPU]
        self.provider.addItems(ordered)
        if current in ordered:
            self.provider.setCurrentText(current)

    # --- file pickers -------------------------------------------------------------------------
    def _browse_model(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, "Model to Profile", self.model.text(), "ONNX models (*.onnx);;All files (*)"
        )
        if name:
            self.set_model(Path(name))

    def _browse_folder(self) -> None:
        name = QFileDialog.getExistingDirectory(self, "Input Data Folder", self.folder.text())
        if name:
            self.folder.setText(name)

    def _browse_output(self) -> None:
        start = self.output.text() or self.output.placeholderText()
        name, _ = QFileDialog.getSaveFileName(self, "Profile File", start, "JSON (*.json)")
        if name:
            self.output.setText(name)

    # --- result -------------------------------------------------------------------------------
    def options(self) -> OrtProfileOptions:
        """The options; DesignerError naming the field when something is wrong."""
        model = self.model_path()
        if model is None:
            raise DesignerError("choose the ONNX model to profile")
        if not model.is_file():
            raise DesignerError(f"the model {model} does not exist")
        inputs_dir = None
        if self.folder_choice.isChecked():
            text = self.folder.text().strip()
            if not text:
                raise DesignerError("choose the input data folder (or use random data)")
            inputs_dir = Path(text).expanduser()
            if not inputs_dir.is_dir():
                raise DesignerError(f"the input folder {inputs_dir} does not exist")
        output_text = self.output.text().strip()
        output = Path(output_text).expanduser() if output_text else None
        if output is not None and output.is_dir():
            raise DesignerError(f"the output profile {output} is a folder; give a file name")
        return OrtProfileOptions(
            model=model,
            iterations=self.iterations.value(),
            warmup=self.warmup.value(),
            provider=self.provider.currentText() or CPU,
            optimize=self.optimize.isChecked(),
            threads=self.threads.value(),
            inputs_dir=inputs_dir,
            dims=self.dim_values() if inputs_dir is None else {},
            output=output,
        )
