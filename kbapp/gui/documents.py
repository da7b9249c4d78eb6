"""The documents pane: watched folders, the documents table (a model: tens of thousands of
rows without a widget per cell, updated row by row), and what can be done with a document
(open it, show it in its folder, retry it)."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)  # fmt: skip

from ..paths import display_path
from .search_pane import LANGUAGE_NOTE

_ROOT = QModelIndex()
COLUMNS = ["Document", "Folder", "State", "Pages", "Passages", "OCR", "Reason"]
NAME, FOLDER, STATE, REASON = 0, 1, 2, 6


def open_with_system(path: str, fragment: str = "") -> str | None:
    """Open a file (or folder) in the application the desktop chooses for it. None when
    it opened; otherwise what stopped it, in words, for the window to show."""
    if not Path(path).exists():
        return f"{path} is not there any more: it was moved or deleted since it was indexed"
    url = QUrl.fromLocalFile(path)
    if fragment:
        url.setFragment(fragment)
    if QDesktopServices.openUrl(url):
        return None
    what = Path(path).suffix or "such"
    return (f"No application on this computer opens {what} files (the desktop has no "
            f"launcher for them): open {path} yourself")


def short_reason(reason: str) -> str:
    """The reason as the column shows it: without the trailing detail in parentheses (the
    library's own message, a path), which the tooltip keeps."""
    return re.sub(r"\s*\((?:[^()]|\([^()]*\))*\)\s*$", "", reason) or reason


def _cells(d) -> list[str]:
    ocr = f"{d.ocr_pages} ({d.ocr_confidence:.0f}%)" if d.ocr_pages else ""
    if d.needs_ocr_pages:
        ocr = f"{d.needs_ocr_pages} need OCR"
    return [
        d.name, display_path(str(Path(d.path).parent)), d.state, str(d.pages or ""),
        "" if d.chunks is None else str(d.chunks), ocr,
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
            if index.column() in (NAME, FOLDER):
                return d.path
            if index.column() == REASON and d.reason:
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


class DocumentsPane(QWidget):
    retry_requested = Signal(str)  # a failed document's path, from its menu
    notice = Signal(str)  # what went wrong opening a document, for the status line

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc_model = DocumentsModel()
        self.docs = QTableView()
        self.docs.setModel(self.doc_model)
        header = self.docs.horizontalHeader()
        # Names, folders and the short columns fit their contents (a long path is cut in
        # its middle, where it says least); the reason takes the rest of the width.
        for col in range(self.doc_model.columnCount()):
            header.setSectionResizeMode(col, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(REASON, QHeaderView.Stretch)
        header.setMaximumSectionSize(420)
        self.docs.setTextElideMode(Qt.ElideMiddle)
        self.docs.verticalHeader().setVisible(False)
        self.docs.setSelectionBehavior(QTableView.SelectRows)
        self.docs.setWordWrap(False)
        self.docs.verticalHeader().setDefaultSectionSize(24)
        self.docs.setContextMenuPolicy(Qt.CustomContextMenu)
        self.docs.customContextMenuRequested.connect(self._menu)
        self.docs.doubleClicked.connect(lambda index: self.open_document(index.row()))
        self.retry_btn = QPushButton("Retry failed")
        self.add_btn = QPushButton("Add folder…")
        self.add_btn.setToolTip(LANGUAGE_NOTE)
        self.cancel_btn = QPushButton("Cancel indexing")
        self.cancel_btn.setEnabled(False)
        docs_bar = QHBoxLayout()
        for w in (self.add_btn, self.retry_btn, self.cancel_btn):
            docs_bar.addWidget(w)
        docs_bar.addStretch(1)
        self.folder_list = QListWidget()
        self.folder_list.setMaximumHeight(110)
        self.remove_btn = QPushButton("Remove folder")
        self.pause_btn = QPushButton("Pause / resume")
        folder_bar = QHBoxLayout()
        folder_bar.addWidget(QLabel("Watched folders"))
        folder_bar.addStretch(1)
        folder_bar.addWidget(self.pause_btn)
        folder_bar.addWidget(self.remove_btn)
        lay = QVBoxLayout(self)
        lay.addLayout(folder_bar)
        lay.addWidget(self.folder_list)
        lay.addLayout(docs_bar)
        lay.addWidget(self.docs, 1)

    def show_documents(self, folders: list[tuple[str, bool]], docs: list) -> None:
        self.folder_list.clear()
        for folder, paused in folders:
            item = QListWidgetItem(f"{folder}{'   (paused)' if paused else ''}")
            item.setData(Qt.UserRole, folder)
            self.folder_list.addItem(item)
        self.doc_model.set_documents(docs)
        failed = sum(1 for d in docs if d.state == "failed")
        self.retry_btn.setText(f"Retry failed ({failed})")
        self.retry_btn.setEnabled(failed > 0)

    def selected_folder(self) -> str | None:
        item = self.folder_list.currentItem()
        return item.data(Qt.UserRole) if item is not None else None

    def _menu(self, pos) -> None:
        row = self.docs.indexAt(pos).row()
        if row < 0:
            return
        d = self.doc_model.docs[row]
        menu = QMenu(self)
        menu.addAction("Open", lambda: self.open_document(row))
        menu.addAction("Show in folder", lambda: self._open(str(Path(d.path).parent)))
        menu.addAction("Copy path", lambda: QGuiApplication.clipboard().setText(d.path))
        if d.state == "failed":
            menu.addAction("Retry", lambda: self.retry_requested.emit(d.path))
        menu.popup(self.docs.viewport().mapToGlobal(pos))

    def open_document(self, row: int) -> None:
        if 0 <= row < len(self.doc_model.docs):
            self._open(self.doc_model.docs[row].path)

    def _open(self, path: str) -> None:
        problem = open_with_system(path)
        if problem:
            self.notice.emit(problem)
