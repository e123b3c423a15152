"""The dialog of a transform plug-in (Tools > Global Model Modification, below the built-in
ones): what the plug-in says it does, where the result goes, Run. The plug-in runs off the
GUI thread on a copy of the model; its result replaces the document as one undo step, or is
written to a file, once the type checker accepts it (as ``onnx-designer transform`` does:
an invalid result of a valid input is refused with the checker's first error)."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from designer.activities.plugin_transforms import PluginTransform, run_transform
from designer.ui.dialogs.transform_runner import TransformDialog, TransformOutcome, TransformWork
from designer.ui.jobs import IsCancelled, Report
from designer.ui.session import DocumentSession


class PluginTransformDialog(TransformDialog):
    def __init__(
        self, session: DocumentSession, transform: PluginTransform, parent: QWidget | None = None
    ) -> None:
        super().__init__(session, transform.title, "Run", transform.name, parent)
        self.transform = transform
        about = QLabel(transform.description or "(the plug-in gives no description)")
        about.setWordWrap(True)
        self.body.addWidget(about)
        plugin = transform.plugin
        source = f", from {plugin.distribution}" if plugin.distribution else ""
        origin = QLabel(f"Plug-in {plugin.name} ({plugin.value}{source})")
        origin.setStyleSheet("color:palette(mid);")
        self.body.addWidget(origin)
        self.resize(620, self.sizeHint().height())  # room for the output path (was 376 px)

    def prepare(self) -> TransformWork | str:
        transform = self.transform
        model, base_dir = self.session.doc.model, self.session.doc.base_dir

        def work(report: Report, cancelled: IsCancelled) -> TransformOutcome:
            report(0.0, f"running {transform.title}")
            result, log = run_transform(transform, model, base_dir)
            return TransformOutcome(result, log, transform.title)

        return work
