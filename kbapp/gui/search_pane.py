"""The search pane: the query bar, the answer line (empty state, no-answer, counts) and the
ranked results, each a citation saying why it is shown. It only draws: the window runs the search
on the engine thread and hands the result here."""

from __future__ import annotations

import html
from collections import Counter

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)  # fmt: skip

from ..cite import by_document, cite
from ..config import MODES, Scope, make_scope
from ..kinds import KIND_NAMES
from ..paths import display_path
from ..search import SearchResult
from ..wording import count
from ..words import marks

# all-MiniLM-L6-v2 was trained on English sentence pairs; full-text search has no language.
LANGUAGE_NOTE = ("Its model understands English: documents in other languages are found "
                 "by the words they contain, not by what a question means.")  # fmt: skip
KIND_LABELS = {"pdf": "PDF", "word": "Word and text documents", "sheet": "Spreadsheets",
               "slides": "Presentations", "mail": "E-mail", "code": "Source code",
               "text": "Markdown, text, HTML", "ebook": "E-books", "image": "Images"}  # fmt: skip
EMPTY_STATE = (
    "<h2>Drop a folder here</h2><p>Drag folders or files onto this window, or add one with "
    "the button below. kbapp reads PDFs (scanned ones too), Word, Excel and PowerPoint "
    "files, OpenDocument, RTF, CSV, e-mail (EML, MSG, mbox), source code, Markdown, text, "
    "HTML, EPUB and images, and watches the folders for changes.</p>"
    f"<p><small>{LANGUAGE_NOTE}</small></p>"
    "<p>Your library lives in <code>{root}</code>. Nothing leaves this machine.</p>"
)
READY_HINT = ("Type a question or keywords and press Enter. Results are passages of your "
              "documents; click one to see it in its source.")  # fmt: skip


def emphasise(text: str, matched) -> str:
    """HTML-escaped text with the words the search matched in bold, found by the search's
    own rule (kbapp.words.marks), so what is bold is what was matched."""
    out, at = [], 0
    for a, b in marks(text, matched):
        out += [html.escape(text[at:a]), "<b>", html.escape(text[a:b]), "</b>"]
        at = b
    return "".join(out) + html.escape(text[at:])


def result_html(h, c, continued: bool = False) -> str:
    """A result card; `continued`: another passage of the document of the card above."""
    where = c.where
    weak = (' <span style="background:#f6c343;color:#000;">&nbsp;weak match&nbsp;</span>'
            if h.weak_match else "")  # fmt: skip
    # a table's rows as read, one to a line; any other passage as one paragraph
    pieces = h.shown.split("\n\n") if h.reading is not None else [h.shown]
    said = "<br>".join(emphasise(" ".join(piece.split()), h.matched) for piece in pieces if piece.strip())
    name = "&nbsp;&nbsp;↳ same document" if continued else html.escape(h.name)
    return (
        f"<div><b>[{c.index}] {name}</b>"
        f" <span style='color:#666'>— {html.escape(c.label)} — {where}</span>{weak}</div>"
        f"<div style='margin-top:3px'>{said}</div>"
        f"<div style='color:#888;font-size:small;margin-top:3px'>{html.escape(h.why)}</div>"
    )


class _ResultList(QListWidget):
    """The result list, saying when its viewport changes size (window, splitter, or a
    scroll bar appearing), so the rows re-wrap. A signal, not an event filter on the
    viewport: a filter outlived its pane while a closed window was garbage-collected and
    crashed two CI runs; a signal's connection ends with its receiver."""

    viewport_resized = Signal()

    def viewportEvent(self, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Resize:
            self.viewport_resized.emit()
        return super().viewportEvent(event)


class SearchPane(QWidget):
    def __init__(self, root: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.root = root
        self.query = QLineEdit()
        self.query.setPlaceholderText("Search your documents…  (Enter)")
        self.query.setClearButtonEnabled(True)
        self.mode = QComboBox()
        self.mode.addItems(list(MODES))
        self.copy_prompt = QPushButton("Copy as prompt")
        bar = QHBoxLayout()
        bar.addWidget(self.query, 1)
        bar.addWidget(QLabel("Mode"))
        bar.addWidget(self.mode)
        bar.addWidget(self.copy_prompt)
        # Where to look: one folder of the library, one kind of file, recent files.
        self.folder_filter = QComboBox()
        self.folder_filter.addItem("All folders", None)
        self.kind_filter = QComboBox()
        self.kind_filter.addItem("All kinds", None)
        for name in KIND_NAMES:
            self.kind_filter.addItem(KIND_LABELS.get(name, name.capitalize()), name)
        self.since_filter = QComboBox()
        for label, since in (("Any time", None), ("Changed in the last week", "7d"),
                             ("Changed in the last month", "30d"),
                             ("Changed in the last year", "1y")):  # fmt: skip
            self.since_filter.addItem(label, since)
        scope_bar = QHBoxLayout()
        scope_bar.addWidget(QLabel("Look in"))
        for combo in (self.folder_filter, self.kind_filter, self.since_filter):
            combo.setSizeAdjustPolicy(QComboBox.AdjustToContents)
            scope_bar.addWidget(combo)
        self.clear_scope = QPushButton("Clear")
        self.clear_scope.setToolTip("Look in every folder, every kind, any time")
        self.clear_scope.setVisible(False)
        self.clear_scope.clicked.connect(self.reset_scope)
        scope_bar.addWidget(self.clear_scope)
        for combo in (self.folder_filter, self.kind_filter, self.since_filter):
            combo.currentIndexChanged.connect(self._scope_changed)
        self.group = QCheckBox("By document")
        self.group.setChecked(True)  # eight cards from one file read as one result
        self.group.setToolTip("One card per document, best document first; its other "
                              "passages open under it")  # fmt: skip
        scope_bar.addWidget(self.group)
        hint = QLabel('<span style="color:#888">"exact phrase"  ·  -word leaves it out</span>')
        scope_bar.addWidget(hint)
        scope_bar.addStretch(1)
        self.answer = QLabel(EMPTY_STATE.format(root=html.escape(root)))
        self.answer.setWordWrap(True)
        self.answer.setTextFormat(Qt.RichText)
        self.empty_add = QPushButton("Add folder…")
        self.empty_add.setVisible(False)
        self.results = _ResultList()
        self.results.setWordWrap(True)
        self.results.setAlternatingRowColors(True)
        self.results.setVerticalScrollMode(QListWidget.ScrollPerPixel)
        self.results.setStyleSheet(
            "QListWidget::item { border-bottom: 1px solid #e3e3e3; }"
            "QListWidget::item:selected { background: #dceaff; color: black; }"
        )
        self.notice = QLabel()
        self.notice.setWordWrap(True)
        self.notice.setStyleSheet("background:#fff4d6; border:1px solid #e0c070; padding:6px;")
        self.notice.setVisible(False)
        lay = QVBoxLayout(self)
        lay.addWidget(self.notice)
        lay.addLayout(bar)
        lay.addLayout(scope_bar)
        lay.addWidget(self.answer)
        lay.addWidget(self.empty_add, 0, Qt.AlignLeft)
        lay.addWidget(self.results, 1)
        self.results.viewport_resized.connect(self.resize_rows)  # re-wrap on any resize

    def set_folders(self, folders: list[str]) -> None:
        """The watched folders a search may be narrowed to; the choice is kept."""
        chosen = self.folder_filter.currentData()
        self.folder_filter.blockSignals(True)
        self.folder_filter.clear()
        self.folder_filter.addItem("All folders", None)
        for folder in folders:
            self.folder_filter.addItem(display_path(folder), folder)
        at = self.folder_filter.findData(chosen) if chosen is not None else 0
        self.folder_filter.setCurrentIndex(max(0, at))
        self.folder_filter.blockSignals(False)

    scope_reset = Signal()  # the filters went back to everything: one search, not three

    def _scope_changed(self) -> None:
        self.clear_scope.setVisible(not self.scope().everything)

    def reset_scope(self) -> None:
        for combo in (self.folder_filter, self.kind_filter, self.since_filter):
            combo.blockSignals(True)
            combo.setCurrentIndex(0)
            combo.blockSignals(False)
        self._scope_changed()
        self.scope_reset.emit()

    def scope(self) -> Scope:
        return make_scope(self.folder_filter.currentData(), self.kind_filter.currentData(),
                          self.since_filter.currentData())  # fmt: skip

    def show_intro(self, empty: bool) -> None:
        """The empty state only while the library is empty; a one-line hint otherwise."""
        self.empty_add.setVisible(empty)
        self.answer.setText(EMPTY_STATE.format(root=html.escape(self.root)) if empty
                            else READY_HINT)  # fmt: skip

    def show_error(self, exc: Exception) -> None:
        self.results.clear()  # nothing of an older search stays under the message
        self.answer.setText(f"<p><b>{html.escape(str(exc))}</b></p>")

    def show_result(self, result: SearchResult, seconds: float = 0.0) -> None:
        self.results.clear()
        self.empty_add.setVisible(False)
        if result.state == "no_answer":
            more = (" <a href='#closest'>Show the closest passage</a>"
                    if result.closest is not None else "")  # fmt: skip
            self.answer.setText(
                f"<h3>No answer</h3><p>Nothing in your library is close enough to "
                f"“{html.escape(result.query)}”: {html.escape(result.reason or '')}.{more}</p>"
            )
            return
        note = ("Only weak matches: none of these is close to your question; read with care. "
                if result.state == "weak" else "")  # fmt: skip
        self.answer.setText(
            f"{note}{count(len(result.hits), 'passage')}"
            + (f" in {count(len({h.doc_id for h in result.hits}), 'document')}"
               if self.group.isChecked() else "")
            + f" ({result.channel}, {seconds * 1000:.0f} ms)"
            + (f", {result.dropped} below the floor hidden" if result.dropped else "")
        )
        hits = self.shown_hits(result)
        grouped = self.group.isChecked()
        per_doc = Counter(h.doc_id for h in hits)
        lead: _Card | None = None
        for n, (h, c) in enumerate(zip(hits, cite(hits), strict=True)):
            continued = n > 0 and hits[n - 1].doc_id == h.doc_id
            item = self.add_result(h, c, continued,
                                   more=per_doc[h.doc_id] - 1 if grouped and not continued else 0)  # fmt: skip
            if grouped and continued and lead is not None:
                lead.followers.append(item)
                item.setHidden(True)  # under its document's card until asked for
            elif not continued:
                lead = self.results.itemWidget(item)
        self.resize_rows()
        if self.results.count():
            self.results.setCurrentRow(0)

    def show_closest(self, result: SearchResult) -> QListWidgetItem:
        """Under a no-answer, one click shows what was nearest."""
        self.results.clear()
        item = self.add_result(result.closest, cite([result.closest])[0])
        self.results.setCurrentItem(item)
        return item

    def shown_hits(self, result: SearchResult) -> list:
        """The hits in the order the list shows and numbers them (and the prompt cites)."""
        return by_document(result.hits) if self.group.isChecked() else result.hits

    def add_result(self, h, c, continued: bool = False,
                   more: int = 0) -> QListWidgetItem:  # fmt: skip
        """One card; `more`: how many passages of the same document open under it."""
        item = QListWidgetItem()
        item.setData(Qt.UserRole, h)
        scores = " · ".join(f"{k} {v:.3f}" for k, v in h.scores.items() if v is not None)
        item.setToolTip(f"{h.path}{c.fragment}\n{scores}")
        card = _Card(result_html(h, c, continued), more)
        card.toggled.connect(self.resize_rows)
        self.results.addItem(item)
        self.results.setItemWidget(item, card)
        item.setSizeHint(card.sizeHint().expandedTo(card.minimumSizeHint()))
        return item

    def resize_rows(self) -> None:
        width = max(200, self.results.viewport().width() - 2)
        for i in range(self.results.count()):
            item = self.results.item(i)
            card = self.results.itemWidget(item)
            if card is not None:
                card.setFixedWidth(width)
                item.setSizeHint(QSize(width, card.heightForWidth(width) + 2))


class _Card(QWidget):
    """A result card: the passage, and under a document's first card a link that opens
    (and closes) the document's other passages. The text lets clicks through to the list
    (they select the card); the link takes its own."""

    toggled = Signal()

    def __init__(self, text: str, more: int = 0) -> None:
        super().__init__()
        self.followers: list[QListWidgetItem] = []
        self.more = more
        self.label = QLabel(text)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.RichText)
        self.label.setContentsMargins(6, 4, 6, 2)
        self.label.setAttribute(Qt.WA_TransparentForMouseEvents)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 4)
        lay.setSpacing(0)
        lay.addWidget(self.label)
        self.expander = QLabel()
        self.expander.setContentsMargins(6, 0, 6, 0)
        self.expander.setTextFormat(Qt.RichText)
        self.expander.linkActivated.connect(lambda _: self.toggle())
        self.expander.setVisible(more > 0)
        lay.addWidget(self.expander, 0, Qt.AlignLeft)
        self._say()

    @property
    def open(self) -> bool:
        return bool(self.followers) and not self.followers[0].isHidden()

    def toggle(self) -> None:
        hide = self.open
        for item in self.followers:
            item.setHidden(hide)
        self._say()
        self.toggled.emit()

    def _say(self) -> None:
        if self.more:
            text = (f"▾ hide the other {count(self.more, 'passage')}" if self.open
                    else f"▸ {count(self.more, 'more passage')} in this document")  # fmt: skip
            self.expander.setText(f"<a href='#more'>{text}</a>")
