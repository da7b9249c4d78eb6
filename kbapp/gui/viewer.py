"""The source viewer: a PDF page rendered with the cited characters' own boxes highlighted;
a spreadsheet's table with the cited cells highlighted; code with line numbers and the
cited lines highlighted; any other document's text (slides, e-mail with its headers,
Word files) with the cited range highlighted and scrolled into view."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

import pymupdf
from PySide6.QtCore import QRect, QRectF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QImage,
    QPainter,
    QPixmap,
    QTextCharFormat,
    QTextCursor,
)  # fmt: skip
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)  # fmt: skip

from ..cite import where_of
from ..errors import KbError
from ..extract.grid import read_grid
from ..extract.pdf import layout_page
from ..extract.sheet import column_letter
from ..kinds import is_rendered

# The table shows the cited rows and this many more around them.
SHEET_CONTEXT_ROWS = 40

HIGHLIGHT = QColor(255, 213, 0, 110)


def highlight_rects(lib, doc_id: int, pdf_page, page: int, a: int, b: int) -> list[tuple]:
    """Rectangles (page points) of the cited characters on one page, merged per line.
    `pdf_page` is the open PyMuPDF page, the one being rendered."""
    pages = {n: (f, t) for n, f, t in lib.pages(doc_id)}
    if page not in pages:
        return []
    pf, pt = pages[page]
    lo, hi = max(a, pf) - pf, min(b, pt) - pf
    if hi <= lo:
        return []
    boxes = lib.page_boxes(doc_id, page)
    if boxes:  # an OCR'd page: word boxes were stored at index time
        raw = [(x0, y0, x1, y1) for s, e, x0, y0, x1, y1 in boxes if s - pf < hi and e - pf > lo]
    else:
        layout = layout_page(pdf_page)
        raw = [bx for bx in layout.char_boxes[lo:hi] if bx is not None]
    merged: list[list[float]] = []
    for x0, y0, x1, y1 in raw:
        last = merged[-1] if merged else None
        if last and abs(last[1] - y0) < 2 and abs(last[3] - y1) < 2 and x0 >= last[0] - 1:
            last[2] = max(last[2], x1)
        else:
            merged.append([x0, y0, x1, y1])
    return [tuple(r) for r in merged]


class _Gutter(QWidget):
    def __init__(self, view: CodeView) -> None:
        super().__init__(view)
        self.view = view

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self.view.gutter_width(), 0)

    def paintEvent(self, event) -> None:  # noqa: N802
        self.view.paint_gutter(event)


class CodeView(QPlainTextEdit):
    """Plain text with line numbers in a gutter (Qt's code editor example, read-only)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.gutter = _Gutter(self)
        self.blockCountChanged.connect(lambda _: self.setViewportMargins(self.gutter_width(), 0, 0, 0))
        self.updateRequest.connect(self._scrolled)
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def gutter_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 12 + self.fontMetrics().horizontalAdvance("9") * digits

    def _scrolled(self, rect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        cr = self.contentsRect()
        self.gutter.setGeometry(QRect(cr.left(), cr.top(), self.gutter_width(), cr.height()))

    def paint_gutter(self, event) -> None:
        painter = QPainter(self.gutter)
        painter.fillRect(event.rect(), QColor(240, 240, 240))
        painter.setPen(QColor(120, 120, 120))
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible():
                painter.drawText(0, top, self.gutter.width() - 6, height, Qt.AlignRight,
                                 str(block.blockNumber() + 1))  # fmt: skip
            top += round(self.blockBoundingRect(block).height())
            block = block.next()
        painter.end()


def _sheet_address(locator: str) -> tuple[str, int, int, int, int] | None:
    """(sheet, first row, last row, first column, last column) of "sheet=S&range=A1:C9"."""
    import re

    frag = dict(p.split("=", 1) for p in locator.split("&") if "=" in p)
    m = re.fullmatch(r"([A-Z]+)(\d+)(?::([A-Z]+)(\d+))?", frag.get("range", ""))
    if "sheet" not in frag or not m:
        return None

    def col(letters: str) -> int:
        n = 0
        for ch in letters:
            n = n * 26 + ord(ch) - 64
        return n

    c0, r0 = col(m.group(1)), int(m.group(2))
    c1, r1 = (col(m.group(3)), int(m.group(4))) if m.group(3) else (c0, r0)
    return unquote(frag["sheet"]), r0, r1, c0, c1


class SourceViewer(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.title = QLabel("Select a result to see it in its source.")
        self.title.setWordWrap(True)
        self.prev_btn = QPushButton("◀ Page")
        self.next_btn = QPushButton("Page ▶")
        self.zoom_in = QPushButton("+")
        self.zoom_out = QPushButton("−")
        self.page_label = QLabel("")
        nav = QHBoxLayout()
        for w in (self.prev_btn, self.next_btn, self.page_label, self.zoom_out, self.zoom_in):
            nav.addWidget(w)
        nav.addStretch(1)
        self.image = QLabel()
        self.image.setAlignment(Qt.AlignHCenter | Qt.AlignTop)
        self.scroll = QScrollArea()
        self.scroll.setWidget(self.image)
        self.scroll.setWidgetResizable(True)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.code = CodeView()
        self.table = QTableWidget()
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.stack = QStackedWidget()
        for w in (self.scroll, self.text, self.code, self.table):
            self.stack.addWidget(w)
        lay = QVBoxLayout(self)
        lay.addWidget(self.title)
        lay.addLayout(nav)
        lay.addWidget(self.stack, 1)
        self.prev_btn.clicked.connect(lambda: self._turn(-1))
        self.next_btn.clicked.connect(lambda: self._turn(1))
        self.zoom_in.clicked.connect(lambda: self._zoom(1.25))
        self.zoom_out.clicked.connect(lambda: self._zoom(0.8))
        self.zoom: float | None = None  # None: fit the page to the pane's width
        self.current: dict | None = None
        self.highlighted: list[tuple] = []
        self._set_nav(False)

    def _set_nav(self, on: bool) -> None:
        for w in (self.prev_btn, self.next_btn, self.zoom_in, self.zoom_out):
            w.setVisible(on)

    def show_hit(self, lib, hit) -> None:
        self.current = {"lib": lib, "hit": hit, "page": hit.page_from, "rects": {}}
        self.title.setText(f"<b>{hit.name}</b> — {hit.section or hit.title} — {where_of(hit)}")
        self._set_nav(False)
        address = _sheet_address(hit.locator) if (hit.locator or "").startswith("sheet=") else None
        if hit.page_from is not None and is_rendered(hit.kind):
            self._set_nav(True)
            self.stack.setCurrentWidget(self.scroll)
            self._render_page()
        elif address is not None and self._show_table(hit, *address):
            self.stack.setCurrentWidget(self.table)
        elif hit.line_from is not None:
            self.stack.setCurrentWidget(self.code)
            self._show_text(self.code, lib, hit)
        else:
            self.stack.setCurrentWidget(self.text)
            self._show_text(self.text, lib, hit)

    def _show_table(self, hit, sheet: str, r0: int, r1: int, c0: int, c1: int) -> bool:
        """The sheet's table with the cited cells highlighted; False if the file cannot
        be read now (moved, changed): the text view shows the indexed text instead."""
        try:
            grid = read_grid(Path(hit.path), hit.kind, sheet, r1 + SHEET_CONTEXT_ROWS)
        except (KbError, OSError, ValueError, KeyError):
            return False
        cols = max([c1, *map(len, grid)])
        self.table.clear()
        self.table.setRowCount(len(grid))
        self.table.setColumnCount(cols)
        self.table.setHorizontalHeaderLabels([column_letter(c + 1) for c in range(cols)])
        self.table.setVerticalHeaderLabels([str(r + 1) for r in range(len(grid))])
        mark = QColor(255, 213, 0, 160)
        self.highlighted = []
        for r, line in enumerate(grid, start=1):
            for c, text in enumerate(line, start=1):
                item = QTableWidgetItem(text)
                if r0 <= r <= r1 and c0 <= c <= c1:
                    item.setBackground(mark)
                    self.highlighted.append((r, c))
                self.table.setItem(r - 1, c - 1, item)
        if grid:
            first = self.table.item(min(r0, len(grid)) - 1, c0 - 1)
            if first is not None:
                self.table.scrollToItem(first, QAbstractItemView.PositionAtCenter)
        return True

    def _show_text(self, view: QPlainTextEdit, lib, hit) -> None:
        view.setPlainText(lib.text(hit.doc_id))
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(255, 213, 0, 160))
        cursor = view.textCursor()
        cursor.setPosition(hit.char_from)
        cursor.setPosition(hit.char_to, QTextCursor.KeepAnchor)
        sel = QTextEdit.ExtraSelection()
        sel.cursor = cursor
        sel.format = fmt
        view.setExtraSelections([sel])
        end = QTextCursor(cursor)
        end.setPosition(hit.char_from)
        view.setTextCursor(end)
        view.centerCursor()
        self.highlighted = [(hit.char_from, hit.char_to)]

    def _render_page(self) -> None:
        cur = self.current
        lib, hit, page = cur["lib"], cur["hit"], cur["page"]
        with pymupdf.open(hit.path) as doc:
            total = doc.page_count
            pdf_page = doc[page - 1]
            if self.zoom is None:
                avail = self.scroll.viewport().width() - 24
                self.zoom = max(0.5, min(3.0, avail / pdf_page.rect.width))
            pix = pdf_page.get_pixmap(matrix=pymupdf.Matrix(self.zoom, self.zoom), alpha=False)
            rects = cur["rects"].get(page)  # zooming redraws; the layout is computed once
            if rects is None:
                rects = highlight_rects(lib, hit.doc_id, pdf_page, page, hit.char_from, hit.char_to)
                cur["rects"][page] = rects
        img = QImage(pix.samples, pix.width, pix.height, pix.stride, QImage.Format_RGB888).copy()
        self.highlighted = rects
        pm = QPixmap.fromImage(img)
        painter = QPainter(pm)
        painter.setPen(Qt.NoPen)
        painter.setBrush(HIGHLIGHT)
        for x0, y0, x1, y1 in rects:
            painter.drawRect(QRectF(x0 * self.zoom, y0 * self.zoom, (x1 - x0) * self.zoom,
                                    (y1 - y0) * self.zoom))  # fmt: skip
        painter.end()
        self.image.setPixmap(pm)
        self.page_label.setText(f"page {page} of {total}")
        self.prev_btn.setEnabled(page > 1)
        self.next_btn.setEnabled(page < total)
        if rects:
            y = int(min(r[1] for r in rects) * self.zoom)
            self.scroll.verticalScrollBar().setValue(max(0, y - 80))

    def _turn(self, step: int) -> None:
        if self.current and self.current["page"]:
            self.current["page"] += step
            self._render_page()

    def _zoom(self, factor: float) -> None:
        self.zoom = min(4.0, max(0.5, (self.zoom or 1.0) * factor))
        if self.current and self.current["page"]:
            self._render_page()
