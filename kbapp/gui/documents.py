"""The documents table as a model: tens of thousands of rows without a widget per cell."""

from __future__ import annotations

import re

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

_ROOT = QModelIndex()
COLUMNS = ["Document", "State", "Pages", "Chunks", "OCR", "Reason"]


def short_reason(reason: str) -> str:
    """The reason as the column shows it: without the trailing detail in parentheses (the
    library's own message, a path), which the tooltip keeps."""
    return re.sub(r"\s*\((?:[^()]|\([^()]*\))*\)\s*$", "", reason) or reason


def _cells(d) -> list[str]:
    ocr = f"{d.ocr_pages} ({d.ocr_confidence:.0f}%)" if d.ocr_pages else ""
    if d.needs_ocr_pages:
        ocr = f"{d.needs_ocr_pages} need OCR"
    return [
        d.name, d.state, str(d.pages or ""), "" if d.chunks is None else str(d.chunks), ocr,
        short_reason(d.reason) if d.reason else "; ".join(d.warnings),
    ]  # fmt: skip


class DocumentsModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self.docs: list = []
        self.rows: list[list[str]] = []

    def set_documents(self, docs: list) -> None:
        """Same documents in the same order (the common refresh while indexing): only the
        rows that changed are repainted; otherwise the table is rebuilt."""
        rows = [_cells(d) for d in docs]
        if [d.path for d in docs] != [d.path for d in self.docs]:
            self.beginResetModel()
            self.docs, self.rows = docs, rows
            self.endResetModel()
            return
        changed = [i for i, (a, b) in enumerate(zip(self.rows, rows, strict=True)) if a != b]
        self.docs, self.rows = docs, rows
        for i in changed:
            self.dataChanged.emit(self.index(i, 0), self.index(i, len(COLUMNS) - 1))

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
            if index.column() == 0:
                return d.path
            if index.column() == 5 and d.reason:
                return d.reason  # the whole reason, detail included
            return self.rows[index.row()][index.column()]
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
