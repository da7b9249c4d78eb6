"""Search settings: mode, prose mode, result count and the gate's two thresholds.
Stored in the library for its model (`kbapp settings` shows and changes the same values);
applied to every search from the window. The thresholds
follow the library's own calibration unless the user overrides them (until reset)."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QSpinBox,
)  # fmt: skip

from ..calibrate import FALLBACK_FLOOR, FALLBACK_WEAK
from ..config import MODES, PROSE_MODES, SearchOptions


class SettingsDialog(QDialog):
    def __init__(self, opts: SearchOptions, parent=None,
                 calibrated: tuple[float, float] | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.setWindowTitle("Search settings")
        self.mode = QComboBox()
        self.mode.addItems(list(MODES))
        self.mode.setCurrentText(opts.mode)
        self.prose = QComboBox()
        self.prose.addItems(list(PROSE_MODES))
        self.prose.setCurrentText(opts.prose_mode)
        self.top_k = QSpinBox()
        self.top_k.setRange(1, 50)
        self.top_k.setValue(opts.top_k)
        self.floor = QDoubleSpinBox()
        self.weak = QDoubleSpinBox()
        auto_floor, auto_weak = calibrated or (FALLBACK_FLOOR, FALLBACK_WEAK)
        for box, value, auto in ((self.floor, opts.min_dense, auto_floor),
                                 (self.weak, opts.weak_dense, auto_weak)):  # fmt: skip
            box.setRange(-1.0, 1.0)
            box.setDecimals(3)
            box.setSingleStep(0.01)
            box.setValue(auto if value is None else value)
        what = (f"this library's calibration (floor {auto_floor:.3f}, weak {auto_weak:.3f})"
                if calibrated else "the default (the library is not calibrated yet)")  # fmt: skip
        self.auto = QCheckBox(f"Use {what}")
        self.auto.setChecked(opts.min_dense is None and opts.weak_dense is None)

        def follow(on: bool) -> None:
            for box, auto in ((self.floor, auto_floor), (self.weak, auto_weak)):
                box.setEnabled(not on)
                if on:
                    box.setValue(auto)

        self.auto.toggled.connect(follow)
        follow(self.auto.isChecked())
        form = QFormLayout(self)
        form.addRow("Search mode", self.mode)
        form.addRow("Prose questions use", self.prose)
        form.addRow("Results shown", self.top_k)
        form.addRow(self.auto)
        form.addRow("No-answer floor (similarity)", self.floor)
        form.addRow("Weak-match threshold", self.weak)
        hint = QLabel(
            "When no passage reaches the floor, the answer is “no answer”. Otherwise a passage "
            "below the floor is hidden unless keyword search found it too (then it is shown "
            "with a weak-match badge), and one between the floor and the weak threshold is "
            "shown with a weak-match badge. kbapp measures both on your library for its "
            "model after indexing (`kbapp calibrate` does it now); a value you set here wins "
            "until you tick the box again."
        )
        hint.setWordWrap(True)
        form.addRow(hint)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def options(self, base: SearchOptions) -> SearchOptions:
        opts = base.with_overrides(
            mode=self.mode.currentText(), prose_mode=self.prose.currentText(),
            top_k=self.top_k.value(),
        )  # fmt: skip
        if self.auto.isChecked():
            return replace(opts, min_dense=None, weak_dense=None)
        weak = max(self.weak.value(), self.floor.value())
        return replace(opts, min_dense=self.floor.value(), weak_dense=weak)
