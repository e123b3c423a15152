"""Set TensorRT Optimization Profile… (X-1): min/opt/max sizes of one top-level input's
dynamic dimensions, one tab per optimization profile.

Errors show inline under the fields and OK stays disabled while any profile is invalid.
OK pushes one :class:`~designer.core.edits.trt.SetOptimizationProfiles` (one undo step) for
every profile at once; other inputs whose free dimensions carry the same names (``batch``,
``seq``) can get the same sizes in the same step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from designer.core.edits.trt import SetOptimizationProfiles
from designer.core.trt.settings import (
    InputDims,
    InputShapes,
    OptimizationProfile,
    TrtSettingsError,
    is_dynamic,
    read_profiles,
    runtime_inputs,
    validate_shapes,
)
from designer.ui.widgets.error_label import ERROR_STYLE, ErrorLabel

if TYPE_CHECKING:
    from designer.ui.session import DocumentSession

MAX_DIM = 2**31 - 1


def _dim_name(dim: int | str, index: int) -> str:
    return dim if isinstance(dim, str) and dim != "?" else f"dim {index}"


class ProfileTab(QWidget):
    """min/opt/max spin boxes for the free dims of one input in one profile."""

    def __init__(self, dims: InputDims, shapes: InputShapes | None) -> None:
        super().__init__()
        self.dims = dims
        self.fields: dict[int, tuple[QSpinBox, QSpinBox, QSpinBox]] = {}
        grid = QGridLayout()
        for col, title in enumerate(("Dimension", "Min", "Opt", "Max")):
            header = QLabel(f"<b>{title}</b>")
            grid.addWidget(header, 0, col)
        for row, dim in enumerate(dims, start=1):
            i = row - 1
            grid.addWidget(QLabel(f"{i}: {_dim_name(dim, i)}"), row, 0)
            if isinstance(dim, int):
                fixed = QLabel(f"{dim} (fixed)")
                fixed.setToolTip("A static dimension: TensorRT uses the declared size")
                grid.addWidget(fixed, row, 1, 1, 3)
                continue
            boxes = []
            for col, which in enumerate(("min", "opt", "max"), start=1):
                box = QSpinBox()
                box.setRange(0, MAX_DIM)
                box.setObjectName(f"{which}_{i}")
                box.setValue(getattr(shapes, which)[i] if shapes is not None else 1)
                box.setMinimumWidth(80)
                grid.addWidget(box, row, col)
                boxes.append(box)
            self.fields[i] = (boxes[0], boxes[1], boxes[2])
        self.error = ErrorLabel()
        self.others = QLabel()
        self.others.setWordWrap(True)
        self.others.setStyleSheet("color: palette(mid)")
        layout = QVBoxLayout(self)
        layout.addLayout(grid)
        layout.addWidget(self.error)
        layout.addWidget(self.others)
        layout.addStretch(1)

    def shapes(self) -> InputShapes:
        lo, mid, hi = [], [], []
        for i, dim in enumerate(self.dims):
            if isinstance(dim, int):
                lo.append(dim)
                mid.append(dim)
                hi.append(dim)
            else:
                a, b, c = self.fields[i]
                lo.append(a.value())
                mid.append(b.value())
                hi.append(c.value())
        return InputShapes(tuple(lo), tuple(mid), tuple(hi))

    def named_sizes(self) -> dict[str, tuple[int, int, int]]:
        """Dimension name → (min, opt, max) for this tab's named free dims."""
        out = {}
        for i, dim in enumerate(self.dims):
            if isinstance(dim, str) and dim != "?":
                a, b, c = self.fields[i]
                out[dim] = (a.value(), b.value(), c.value())
        return out


class TrtProfileDialog(QDialog):
    """Edit the optimization profiles as far as they concern input ``name``."""

    def __init__(self, session: DocumentSession, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.name = name
        self._profile_of: dict[int, OptimizationProfile] = {}  # tab id -> stored profile
        self.setWindowTitle(f"TensorRT Optimization Profile — {name}")
        model = session.doc.model
        inputs = runtime_inputs(model)
        self.inputs = inputs
        dims = inputs.get(name)
        self.problem = ""
        try:
            self.stored = list(read_profiles(model))
        except TrtSettingsError as exc:
            self.stored = []
            self.problem = f"{exc}; OK replaces it"
        layout = QVBoxLayout(self)
        shown = "unknown" if dims is None else "[" + ", ".join(map(repr, dims)) + "]"
        intro = QLabel(
            f"Input <b>{name}</b> {shown}: sizes TensorRT must support for its dynamic "
            "dimensions; the engine is tuned for <i>opt</i>. Each tab is one optimization "
            "profile."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("profiles")
        self.dims: InputDims = dims or []
        layout.addWidget(self.tabs, 1)
        row = QHBoxLayout()
        self.add_button = QPushButton("Add Profile")
        self.add_button.clicked.connect(lambda _c=False: self.add_profile())
        self.remove_button = QPushButton("Remove Profile")
        self.remove_button.clicked.connect(lambda _c=False: self.remove_profile())
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        row.addStretch(1)
        layout.addLayout(row)
        self.same_names = QCheckBox(
            "Use the same sizes for other inputs' dimensions of the same name"
        )
        self.same_names.setChecked(True)
        self.same_names.toggled.connect(lambda _on: self.revalidate())
        layout.addWidget(self.same_names)
        self.status = QLabel(self.problem)
        self.status.setObjectName("status")
        self.status.setStyleSheet(ERROR_STYLE)
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(460)
        if dims is None:
            self.status.setText(
                f"'{name}' is not a top-level input with a declared shape; declare its shape "
                "first (Parameters window)"
            )
            for w in (self.add_button, self.remove_button, self.ok_button):
                w.setEnabled(False)
            return
        if not is_dynamic(dims):
            self.problem = self.problem or (
                "This input has only fixed dimensions: TensorRT needs no profile for it"
            )
        for profile in self.stored or [OptimizationProfile({})]:
            self.add_profile(profile.shapes.get(name), profile)
        self.revalidate()

    @property
    def ok_button(self) -> QPushButton:
        return self.buttons.button(QDialogButtonBox.StandardButton.Ok)

    def tab(self, index: int) -> ProfileTab:
        widget = self.tabs.widget(index)
        assert isinstance(widget, ProfileTab)
        return widget

    # --- profiles -------------------------------------------------------------------------
    def add_profile(
        self, shapes: InputShapes | None = None, profile: OptimizationProfile | None = None
    ) -> ProfileTab:
        tab = ProfileTab(self.dims, shapes or self._guess(profile))
        for boxes in tab.fields.values():
            for box in boxes:
                box.valueChanged.connect(lambda _v: self.revalidate())
        self.tabs.addTab(tab, "")
        self.tabs.setCurrentWidget(tab)
        self._profile_of[id(tab)] = profile if profile is not None else OptimizationProfile({})
        self.revalidate()
        return tab

    def remove_profile(self) -> None:
        index = self.tabs.currentIndex()
        if index >= 0:
            tab = self.tab(index)
            self.tabs.removeTab(index)
            self._profile_of.pop(id(tab), None)
            tab.deleteLater()
        self.revalidate()

    def _guess(self, profile: OptimizationProfile | None) -> InputShapes | None:
        """Sizes for a new entry: other inputs' dims of the same name in that profile."""
        if profile is None or not profile.shapes:
            return None
        sizes: dict[str, tuple[int, int, int]] = {}
        for other, shapes in profile.shapes.items():
            for i, dim in enumerate(self.inputs.get(other) or []):
                if isinstance(dim, str) and dim != "?" and i < len(shapes.min):
                    sizes.setdefault(dim, (shapes.min[i], shapes.opt[i], shapes.max[i]))
        if not any(isinstance(d, str) and d in sizes for d in self.dims):
            return None
        picks = [(d, d, d) if isinstance(d, int) else sizes.get(d, (1, 1, 1)) for d in self.dims]
        return InputShapes(
            tuple(p[0] for p in picks), tuple(p[1] for p in picks), tuple(p[2] for p in picks)
        )

    # --- result ---------------------------------------------------------------------------
    def profiles(self) -> list[OptimizationProfile]:
        """Every tab as a full profile: the stored entries of other inputs kept, this
        input's set, and (when asked) same-named dims copied to other inputs."""
        out = []
        for index in range(self.tabs.count()):
            tab = self.tab(index)
            base = dict(self._profile_of.get(id(tab), OptimizationProfile({})).shapes)
            base[self.name] = tab.shapes()
            if self.same_names.isChecked():
                base.update(self._propagated(tab))
            ordered = {n: base[n] for n in self.inputs if n in base}
            ordered.update({n: s for n, s in base.items() if n not in ordered})
            out.append(OptimizationProfile(ordered))
        return out

    def _propagated(self, tab: ProfileTab) -> dict[str, InputShapes]:
        sizes = tab.named_sizes()
        out: dict[str, InputShapes] = {}
        for other, dims in self.inputs.items():
            if other == self.name or not dims:
                continue
            free = [d for d in dims if isinstance(d, str)]
            if not free or not all(d in sizes for d in free):
                continue  # only inputs whose every free dim this input names
            lo, mid, hi = [], [], []
            for d in dims:
                a, b, c = (d, d, d) if isinstance(d, int) else sizes[d]
                lo.append(a)
                mid.append(b)
                hi.append(c)
            out[other] = InputShapes(tuple(lo), tuple(mid), tuple(hi))
        return out

    def revalidate(self) -> bool:
        """Check every tab; show problems inline; enable OK only when all are valid."""
        model = self.session.doc.model
        valid = True
        for index in range(self.tabs.count()):
            tab = self.tab(index)
            problem = validate_shapes(model, self.name, tab.shapes())
            tab.error.setText(problem.replace(f"'{self.name}' ", "") if problem else "")
            self.tabs.setTabText(index, f"Profile {index}" + (" ⚠" if problem else ""))
            valid = valid and problem is None
            others = [n for n in self._profile_of.get(id(tab), OptimizationProfile({})).shapes]
            others = [n for n in others if n != self.name]
            if self.same_names.isChecked():
                others = sorted(set(others) | set(self._propagated(tab)))
            tab.others.setText("Also in this profile: " + ", ".join(others) if others else "")
        if self.tabs.count() == 0:
            self.status.setText(
                "No profile: OK removes every optimization profile of the model"
                if self.stored
                else "Add a profile"
            )
            valid = bool(self.stored)
        else:
            self.status.setText(self.problem)
        self.remove_button.setEnabled(self.tabs.count() > 0)
        self.ok_button.setEnabled(valid)
        return valid

    def accept(self) -> None:
        if not self.revalidate():
            return
        profiles = self.profiles()
        if profiles == self.stored:
            super().accept()
            return
        reason = self.session.try_push(SetOptimizationProfiles(profiles))
        if reason is not None:
            self.status.setText(reason)
            return
        super().accept()
