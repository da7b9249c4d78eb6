"""The source viewer: a PDF page rendered with the cited characters' own boxes highlighted;
a spreadsheet's table with the cited cells highlighted; code with line numbers and the
cited lines highlighted; any other document's text (slides, e-mail with its headers,
Word files) with the cited range highlighted and scrolled into view."""

from __future__ import annotations

import html

from PySide6.QtCore import QRect, QRectF, QSize, Qt, QTimer
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
from ..extract.sheet import column_letter
from ..view import View, prepare_view

HIGHLIGHT = QColor(255, 213, 0, 110)


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
        self.blank = QLabel("")
        self.stack = QStackedWidget()
        for w in (self.scroll, self.text, self.code, self.table, self.blank):
            self.stack.addWidget(w)
        lay = QVBoxLayout(self)
        lay.addWidget(self.title)
        lay.addLayout(nav)
        lay.addWidget(self.stack, 1)
        self.prev_btn.clicked.connect(lambda: self._turn(-1))
        self.next_btn.clicked.connect(lambda: self._turn(1))
        self.zoom_in.clicked.connect(lambda: self._zoom(1.25))
        self.zoom_out.clicked.connect(lambda: self._zoom(0.8))
        self.engine = None  # set by the window: pages are then rendered on its thread
        self.zoom: float | None = None
        self.fit = True  # the page follows the pane's width until the user zooms
        self.current: View | None = None
        self.highlighted: list[tuple] = []
        self._asked = 0  # the latest view asked for; an older one arriving late is dropped
        self._fit = QTimer(self, singleShot=True, interval=150)
        self._fit.timeout.connect(self._refit)
        self._set_nav(False)

    def _set_nav(self, on: bool) -> None:
        for w in (self.prev_btn, self.next_btn, self.zoom_in, self.zoom_out):
            w.setVisible(on)
        if not on:
            self.page_label.setText("")

    def clear(self, message: str = "") -> None:
        """Nothing shown (after a no-answer: no page of an older result stays up)."""
        self.current = None
        self.highlighted = []
        self._asked += 1  # a view still being prepared for an older search is dropped
        self.title.setText(message or "Select a result to see it in its source.")
        self._set_nav(False)
        self.stack.setCurrentWidget(self.blank)

    # -- asking for a view ----------------------------------------------------------------
    def show_hit(self, lib, hit) -> None:
        """Show a hit now, on this thread (tests and tools; the window uses `request`)."""
        self.present(prepare_view(lib, hit, None, self._zoom_for(hit), self._width()))

    def request(self, hit, page: int | None = None) -> None:
        """Ask the engine thread for the view; it is shown when it arrives (a newer
        request overtakes an older one)."""
        self.title.setText(f"<b>{html.escape(hit.name)}</b> — opening…")
        self._ask(hit, page, self._zoom_for(hit))

    def _ask(self, hit, page: int | None, zoom: float | None) -> None:
        width = self._width()
        self._asked += 1
        ticket = self._asked

        def arrived(view: View) -> None:
            if ticket == self._asked:
                self.present(view)

        self.engine.call(lambda lib: prepare_view(lib, hit, page, zoom, width), arrived,
                         self._failed, kind="view")  # fmt: skip

    def _zoom_for(self, hit) -> float | None:
        same = self.current is not None and self.current.hit.doc_id == hit.doc_id
        if not same:
            self.fit = True
        return None if self.fit else self.zoom

    def _width(self) -> int:
        return self.scroll.viewport().width() if self.scroll.isVisible() else self.width()

    def _failed(self, exc: Exception) -> None:
        self.clear(f"Cannot show this source: {html.escape(str(exc))}")

    # -- putting it on screen (GUI thread, no I/O) ------------------------------------------
    def present(self, view: View) -> None:
        hit = view.hit
        self.current = view
        self.title.setText(f"<b>{html.escape(hit.name)}</b> — "
                           f"{html.escape(hit.section or hit.title or '')} — {where_of(hit)}")  # fmt: skip
        self._set_nav(view.mode == "page")
        if view.mode == "page":
            self.stack.setCurrentWidget(self.scroll)
            self._show_page(view)
        elif view.mode == "table":
            self.stack.setCurrentWidget(self.table)
            self._show_table(view.grid, *view.address)
        else:
            widget = self.code if view.mode == "code" else self.text
            self.stack.setCurrentWidget(widget)
            self._show_text(widget, view)

    def _show_table(self, grid, sheet: str, r0: int, r1: int, c0: int, c1: int) -> None:
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

    def _show_text(self, widget: QPlainTextEdit, view: View) -> None:
        hit = view.hit
        widget.setPlainText(view.text)
        a, b = hit.char_from - view.offset, hit.char_to - view.offset
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(255, 213, 0, 160))
        cursor = widget.textCursor()
        cursor.setPosition(a)
        cursor.setPosition(b, QTextCursor.KeepAnchor)
        sel = QTextEdit.ExtraSelection()
        sel.cursor = cursor
        sel.format = fmt
        widget.setExtraSelections([sel])
        end = QTextCursor(cursor)
        end.setPosition(a)
        widget.setTextCursor(end)
        widget.centerCursor()
        self.highlighted = [(a, b)]

    def _show_page(self, view: View) -> None:
        self.zoom = view.zoom
        self.highlighted = view.rects
        px = view.image
        pm = QPixmap.fromImage(QImage(px.samples, px.width, px.height, px.stride,
                                      QImage.Format_RGB888))  # fmt: skip
        painter = QPainter(pm)
        painter.setPen(Qt.NoPen)
        painter.setBrush(HIGHLIGHT)
        z = view.zoom
        for x0, y0, x1, y1 in view.rects:
            painter.drawRect(QRectF(x0 * z, y0 * z, (x1 - x0) * z, (y1 - y0) * z))
        painter.end()
        self.image.setPixmap(pm)
        self.page_label.setText(f"page {view.page} of {view.pages}")
        self.prev_btn.setEnabled(view.page > 1)
        self.next_btn.setEnabled(view.page < view.pages)
        if view.rects:  # after the layout has taken the new pixmap's size
            y = int(min(r[1] for r in view.rects) * z)
            QTimer.singleShot(0, lambda: self.scroll.verticalScrollBar().setValue(max(0, y - 80)))
        else:
            self.scroll.verticalScrollBar().setValue(0)

    def _rerender(self, page: int, zoom: float | None) -> None:
        view = self.current
        if view is None or view.mode != "page" or self.engine is None:
            return
        self._ask(view.hit, page, zoom)

    def _turn(self, step: int) -> None:
        if self.current is not None and self.current.page:
            self._rerender(self.current.page + step, self.zoom)

    def _zoom(self, factor: float) -> None:
        if self.current is not None and self.current.page:
            self.fit = False
            self._rerender(self.current.page, min(4.0, max(0.5, (self.zoom or 1.0) * factor)))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.current is not None and self.current.mode == "page":
            self._fit.start()  # a fitted page follows the pane's width once resizing pauses

    def _refit(self) -> None:
        if self.fit and self.current is not None and self.current.page:
            self._rerender(self.current.page, None)
