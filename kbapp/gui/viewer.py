"""The source viewer: a PDF page rendered with the cited characters' own boxes highlighted,
or the canonical text with the cited range selected."""

from __future__ import annotations

import pymupdf
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)  # fmt: skip

from ..extract.pdf import layout_page

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
        self.stack = QStackedWidget()
        self.stack.addWidget(self.scroll)
        self.stack.addWidget(self.text)
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
        where = (
            f"page {hit.page_from}"
            if hit.page_from
            else f"characters {hit.char_from}–{hit.char_to}"
        )
        self.title.setText(f"<b>{hit.name}</b> — {hit.section or hit.title} — {where}")
        if hit.page_from is not None:
            self._set_nav(True)
            self.stack.setCurrentWidget(self.scroll)
            self._render_page()
        else:
            self._set_nav(False)
            self.stack.setCurrentWidget(self.text)
            self._show_text(lib, hit)

    def _show_text(self, lib, hit) -> None:
        self.text.setPlainText(lib.text(hit.doc_id))
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(255, 213, 0, 160))
        cursor = self.text.textCursor()
        cursor.setPosition(hit.char_from)
        cursor.setPosition(hit.char_to, QTextCursor.KeepAnchor)
        sel = QTextEdit.ExtraSelection()
        sel.cursor = cursor
        sel.format = fmt
        self.text.setExtraSelections([sel])
        end = QTextCursor(cursor)
        end.setPosition(hit.char_from)
        self.text.setTextCursor(end)
        self.text.centerCursor()
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
