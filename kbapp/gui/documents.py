"""The documents table as a model: tens of thousands of rows without a widget per cell."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

_ROOT = QModelIndex()
COLUMNS = ["Document", "State", "Pages", "Chunks", "OCR", "Reason"]


def _cells(d) -> list[str]:
    ocr = f"{d.ocr_pages} ({d.ocr_confidence:.0f}%)" if d.ocr_pages else ""
    if d.needs_ocr_pages:
        ocr = f"{d.needs_ocr_pages} need OCR"
    return [
        d.name, d.state, str(d.pages or ""), "" if d.chunks is None else str(d.chunks), ocr,
        d.reason or "; ".join(d.warnings),
    ]  # fmt: skip


class DocumentsModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self.docs: list = []
        self.rows: list[list[str]] = []

    def set_documents(self, docs: list) -> None:
        self.beginResetModel()
        self.docs = docs
        self.rows = [_cells(d) for d in docs]
        self.endResetModel()

    def rowCount(self, parent=_ROOT) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=_ROOT) -> int:  # noqa: N802
        return len(COLUMNS)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        if role == Qt.DisplayRole:
            return self.rows[index.row()][index.column()]
        if role == Qt.ToolTipRole:
            d = self.docs[index.row()]
            return d.path if index.column() == 0 else self.rows[index.row()][index.column()]
        if role == Qt.ForegroundRole and self.docs[index.row()].state == "failed":
            from PySide6.QtGui import QColor

            return QColor(170, 30, 30)
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):  # noqa: N802
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return COLUMNS[section]
        return None

    def cell(self, row: int, column: int) -> str:
        return self.rows[row][column]
