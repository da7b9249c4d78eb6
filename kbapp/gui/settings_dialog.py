"""Search settings: mode, prose mode, result count and the gate's two thresholds.
Remembered with QSettings; applied to every search from the window."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QSpinBox,
)  # fmt: skip

from ..config import MODES, PROSE_MODES, SearchOptions

KEYS = ("mode", "prose_mode", "top_k", "min_dense", "weak_dense")


def load_search_settings(store: QSettings, defaults: SearchOptions) -> SearchOptions:
    values = {}
    for key in KEYS:
        raw = store.value(f"search/{key}")
        if raw is None:
            continue
        kind = type(getattr(defaults, key))
        try:
            values[key] = kind(raw)
        except (TypeError, ValueError):
            continue
    try:
        return defaults.with_overrides(**values)
    except Exception:  # noqa: BLE001 - a broken saved value falls back to the defaults
        return defaults


def save_search_settings(store: QSettings, opts: SearchOptions) -> None:
    for key in KEYS:
        store.setValue(f"search/{key}", getattr(opts, key))


class SettingsDialog(QDialog):
    def __init__(self, opts: SearchOptions, parent=None) -> None:
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
        for box, value in ((self.floor, opts.min_dense), (self.weak, opts.weak_dense)):
            box.setRange(-1.0, 1.0)
            box.setDecimals(3)
            box.setSingleStep(0.01)
            box.setValue(value)
        form = QFormLayout(self)
        form.addRow("Search mode", self.mode)
        form.addRow("Prose questions use", self.prose)
        form.addRow("Results shown", self.top_k)
        form.addRow("No-answer floor (cosine similarity)", self.floor)
        form.addRow("Weak-match threshold", self.weak)
        hint = QLabel(
            "Below the floor a passage is hidden; between the floor and the weak threshold it "
            "is shown with a weak-match badge. The defaults were measured for the bundled "
            "model; `kbapp eval` recalibrates them for another model or corpus."
        )
        hint.setWordWrap(True)
        form.addRow(hint)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def options(self, base: SearchOptions) -> SearchOptions:
        weak = max(self.weak.value(), self.floor.value())
        return base.with_overrides(
            mode=self.mode.currentText(), prose_mode=self.prose.currentText(),
            top_k=self.top_k.value(), min_dense=self.floor.value(), weak_dense=weak,
        )  # fmt: skip
