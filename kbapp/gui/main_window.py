"""The main window: documents panel, search pane with results, and the source viewer."""

from __future__ import annotations

import html
import logging
import re
import time
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QSettings, QSize, Qt, QTimer, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)  # fmt: skip

from ..cite import build_context, cite
from ..config import MODES
from ..errors import KbError
from ..extract.ocr import tesseract_available
from ..library import Library
from ..search import SearchResult
from ..search.bm25 import STOPWORDS
from .documents import DocumentsModel
from .jobs import IndexThread, run_in_background
from .settings_dialog import SettingsDialog, load_search_settings, save_search_settings
from .viewer import SourceViewer

log = logging.getLogger(__name__)

EMPTY_STATE = (
    "<h2>Drop a folder here</h2><p>Drag folders or files onto this window, or use "
    "<b>Add folder…</b>. kbapp reads PDFs (scanned ones too), Word, Excel and PowerPoint "
    "files, OpenDocument, RTF, CSV, e-mail (EML, MSG, mbox), source code, Markdown, text, "
    "HTML, EPUB and images, and watches the folders for changes.</p>"
    "<p>Your library lives in <code>{root}</code>. Nothing leaves this machine.</p>"
)
RESCAN_MS = 60_000
MAX_WATCHED = 4000  # inotify watches are a per-user budget; a rescan catches the rest


def query_terms(query: str) -> list[str]:
    return sorted({t for t in re.findall(r"\w+", query.lower()) if len(t) > 2 and t not in STOPWORDS},
                  key=len, reverse=True)  # fmt: skip


def emphasise(text: str, terms: list[str]) -> str:
    """HTML-escaped text with the query's words in bold (whole words, any case)."""
    out = html.escape(text)
    if terms:
        pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")\w*", re.I)
        out = pattern.sub(lambda m: f"<b>{m.group(0)}</b>", out)
    return out


def result_html(h, c, terms: list[str]) -> str:
    where = c.where
    weak = (' <span style="background:#f6c343;color:#000;">&nbsp;weak match&nbsp;</span>'
            if h.weak_match else "")  # fmt: skip
    scores = " · ".join(f"{k} {v:.3f}" for k, v in h.scores.items() if v is not None)
    quote = " ".join(h.content.split())
    return (
        f"<div><b>[{c.index}] {html.escape(h.name)}</b>"
        f" <span style='color:#666'>— {html.escape(c.label)} — {where}</span>{weak}</div>"
        f"<div style='margin-top:3px'>{emphasise(quote, terms)}</div>"
        f"<div style='color:#888;font-size:small;margin-top:3px'>{scores}</div>"
    )


class MainWindow(QMainWindow):
    def __init__(self, library: Library) -> None:
        super().__init__()
        self.lib = library
        self.settings = QSettings("kbapp", "kbapp")
        self.setWindowTitle("kbapp — your local knowledge base")
        self.setAcceptDrops(True)
        self.index_thread: IndexThread | None = None
        self.pending_index = False
        self.new_paths: list[str] = []  # added folders the next indexing run registers
        self.ready = False
        self.last_result: SearchResult | None = None
        self._last_refresh = 0.0
        self.documents_shown = 0  # how many refreshes reached the table (tests wait on it)

        # search pane
        self.query = QLineEdit()
        self.query.setPlaceholderText("Search your documents…  (Enter)")
        self.query.setClearButtonEnabled(True)
        self.mode = QComboBox()
        self.mode.addItems(list(MODES))
        self.search_opts = load_search_settings(self.settings, library.settings.search)
        self.mode.setCurrentText(self.search_opts.mode)
        self.copy_prompt = QPushButton("Copy as prompt")
        bar = QHBoxLayout()
        bar.addWidget(self.query, 1)
        bar.addWidget(QLabel("Mode"))
        bar.addWidget(self.mode)
        bar.addWidget(self.copy_prompt)
        self.answer = QLabel(EMPTY_STATE.format(root=html.escape(str(library.root))))
        self.answer.setWordWrap(True)
        self.answer.setTextFormat(Qt.RichText)
        self.answer.linkActivated.connect(self._answer_link)
        self.results = QListWidget()
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
        search_pane = QWidget()
        sl = QVBoxLayout(search_pane)
        sl.addWidget(self.notice)
        sl.addLayout(bar)
        sl.addWidget(self.answer)
        sl.addWidget(self.results, 1)

        # documents panel
        self.doc_model = DocumentsModel()
        self.docs = QTableView()
        self.docs.setModel(self.doc_model)
        header = self.docs.horizontalHeader()
        for col in range(self.doc_model.columnCount()):
            # name and reason share the width; the short columns fit their contents
            mode = QHeaderView.Stretch if col in (0, 5) else QHeaderView.ResizeToContents
            header.setSectionResizeMode(col, mode)
        self.docs.verticalHeader().setVisible(False)
        self.docs.setSelectionBehavior(QTableView.SelectRows)
        self.docs.setWordWrap(False)
        self.docs.verticalHeader().setDefaultSectionSize(24)
        self.retry_btn = QPushButton("Retry failed")
        self.add_btn = QPushButton("Add folder…")
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
        docs_pane = QWidget()
        dl = QVBoxLayout(docs_pane)
        dl.addLayout(folder_bar)
        dl.addWidget(self.folder_list)
        dl.addLayout(docs_bar)
        dl.addWidget(self.docs, 1)

        self.viewer = SourceViewer()
        self.open_external = QPushButton("Open in default app")
        self.open_external.setEnabled(False)
        viewer_pane = QWidget()
        vl = QVBoxLayout(viewer_pane)
        vl.addWidget(self.viewer, 1)
        vl.addWidget(self.open_external)

        self.tabs = QTabWidget()
        self.tabs.addTab(search_pane, "Search")
        self.tabs.addTab(docs_pane, "Documents")
        split = QSplitter()
        split.addWidget(self.tabs)
        split.addWidget(viewer_pane)
        split.setSizes([620, 660])
        self.setCentralWidget(split)

        self.progress = QProgressBar()
        self.progress.setMaximumWidth(260)
        self.progress.setVisible(False)
        self.status_label = QLabel("Loading the model…")
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.progress)

        act = QAction("Add folder…", self)
        act.setShortcut(QKeySequence.Open)
        act.triggered.connect(self.choose_folder)
        menu = self.menuBar().addMenu("&Library")
        menu.addAction(act)
        prefs = QAction("Search settings…", self)
        prefs.setShortcut(QKeySequence.Preferences)
        prefs.triggered.connect(self.edit_settings)
        menu.addAction(prefs)

        self.query.returnPressed.connect(self.run_search)
        self.mode.currentTextChanged.connect(self._mode_changed)
        self.results.itemActivated.connect(self.open_result)
        self.results.itemClicked.connect(self.open_result)
        self.copy_prompt.clicked.connect(self.copy_as_prompt)
        self.add_btn.clicked.connect(self.choose_folder)
        self.retry_btn.clicked.connect(self.retry_failed)
        self.cancel_btn.clicked.connect(self.cancel_indexing)
        self.open_external.clicked.connect(self.open_in_default_app)
        self.remove_btn.clicked.connect(self.remove_folder)
        self.pause_btn.clicked.connect(self.toggle_pause)

        self.watcher = QFileSystemWatcher(self)
        self.watcher.directoryChanged.connect(self._changed)
        self.debounce = QTimer(self, singleShot=True, interval=1500)
        self.debounce.timeout.connect(self.reindex)
        # A folder watcher hears files appear, vanish and get renamed, not edits in place;
        # a periodic incremental scan (stat only, in the background) catches those.
        self.rescan = QTimer(self, interval=RESCAN_MS)
        self.rescan.timeout.connect(self.reindex)

        geometry = self.settings.value("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1280, 800)
        self.query.setFocus()
        self.refresh_documents()
        # the window appears first; the model and vector cache load in the background
        run_in_background(self._warm_up, self._on_ready, self._on_error, owner=self)

    # -- start-up -------------------------------------------------------------------------
    def _warm_up(self) -> int:
        _ = self.lib.encoder
        return len(self.lib.vectors)

    def _on_ready(self, vectors: int) -> None:
        self.ready = True
        self.status_label.setText(f"Ready: {vectors} passages searchable.")
        if not tesseract_available() and not self.settings.value("notice/tesseract", False, bool):
            self.notice.setText(
                "Tesseract (the OCR engine) is not installed. Text PDFs, notes and web pages "
                "work as usual; scanned pages and images are marked “needs OCR” until it is "
                "installed (Debian/Ubuntu: apt install tesseract-ocr tesseract-ocr-eng), "
                "then use Retry."
            )
            self.notice.setVisible(True)
            self.settings.setValue("notice/tesseract", True)  # said once
        self._watch_folders()
        self.reindex()  # reconcile what changed while the app was closed
        self.rescan.start()

    def _on_error(self, exc: Exception) -> None:
        self.status_label.setText(f"Error: {exc}")
        QMessageBox.warning(self, "kbapp", str(exc))

    # -- folders and indexing -------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt API
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        self.add_paths(paths)

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a folder to the library")
        if folder:
            self.add_paths([folder])

    def add_paths(self, paths: list[str]) -> None:
        """New folders are registered by the next indexing run, under the writer lock on
        the indexing thread: the GUI thread never waits for the lock."""
        for p in paths:
            if not Path(p).exists():
                self.status_label.setText(f"Cannot add {p}: no such folder or file")
            elif p not in self.new_paths:
                self.new_paths.append(p)
        if self.new_paths:
            self.reindex()

    def _watch_folders(self) -> None:
        """Watch every folder and subfolder; the tree walk runs off the GUI thread."""

        def walk() -> list[str]:
            dirs: list[str] = []
            for folder, paused in self.lib.folders():
                root = Path(folder)
                if paused or not root.is_dir():
                    continue
                dirs.append(folder)
                for sub in root.rglob("*"):
                    if len(dirs) >= MAX_WATCHED:
                        return dirs
                    if sub.is_dir() and not sub.is_symlink() and not sub.name.startswith("."):
                        dirs.append(str(sub))
            return dirs

        def add(dirs: list[str]) -> None:
            new = [d for d in dirs if d not in set(self.watcher.directories())]
            if new:
                self.watcher.addPaths(new)

        run_in_background(walk, add, self._on_error, owner=self)

    def _changed(self, _path: str) -> None:
        self.debounce.start()  # a burst of events becomes one incremental scan

    def reindex(self) -> None:
        if not self.ready:
            return
        if self.index_thread is not None:
            self.pending_index = True
            return
        paths, self.new_paths = self.new_paths or None, []
        # wait=True: another kbapp process indexing this library is waited for, not an error
        self._start(lambda prog, cancel: self.lib.index(paths, progress=prog, cancel=cancel,
                                                        wait=True))  # fmt: skip

    def retry_failed(self) -> None:
        if self.index_thread is None and self.ready:
            self._start(lambda prog, cancel: self.lib.retry(progress=prog))

    def _start(self, job) -> None:
        t = IndexThread(job)
        t.progress.connect(self._on_progress)
        t.finished_with.connect(self._on_indexed)
        t.failed.connect(self._on_index_failed)
        self.index_thread = t
        self.cancel_btn.setEnabled(True)
        self.progress.setVisible(True)
        t.start()

    def cancel_indexing(self) -> None:
        if self.index_thread is not None:
            self.index_thread.cancel()

    def _on_progress(self, p) -> None:
        self.progress.setMaximum(1000)
        self.progress.setValue(int(p.fraction * 1000))
        self.status_label.setText(p.describe())
        if p.done == p.total or time.monotonic() - self._last_refresh > 2.0:
            self.refresh_documents()

    def _finish_thread(self) -> None:
        t = self.index_thread
        self.index_thread = None
        if t is not None:
            t.wait()
        self.cancel_btn.setEnabled(False)
        self.progress.setVisible(False)
        self.refresh_documents()
        self._watch_folders()
        if self.pending_index:
            self.pending_index = False
            self.reindex()

    def _on_indexed(self, p) -> None:
        searchable = f"{len(self.lib.vectors)} passages searchable"
        if p.cancelled:
            text = f"Indexing cancelled after {p.done} of {p.total} documents; {searchable}."
        elif p.total == 0:
            text = f"Up to date: {searchable}."
        else:
            text = f"Indexed {p.indexed}, failed {p.failed}: {p.chunks} passages written; {searchable}."
        self.status_label.setText(text)
        self._finish_thread()

    def _on_index_failed(self, exc: Exception) -> None:
        self.status_label.setText(f"Indexing stopped: {exc}")
        self._finish_thread()

    def _selected_folder(self) -> str | None:
        item = self.folder_list.currentItem()
        return item.data(Qt.UserRole) if item is not None else None

    def remove_folder(self) -> None:
        folder = self._selected_folder()
        if folder is None or self.index_thread is not None:
            self.status_label.setText("Select a folder (and wait for indexing to finish).")
            return
        try:
            n = self.lib.remove_folder(folder)
        except KbError as exc:
            self.status_label.setText(str(exc))
            return
        if folder in self.watcher.directories():
            self.watcher.removePaths(
                [d for d in self.watcher.directories() if d.startswith(folder)]
            )
        self.status_label.setText(f"Removed {folder}: {n} documents left the index.")
        self.refresh_documents()

    def toggle_pause(self) -> None:
        folder = self._selected_folder()
        if folder is None:
            return
        paused = dict(self.lib.folders()).get(folder, False)

        def done(_: object) -> None:
            self.refresh_documents()
            if paused:
                self.reindex()

        # off the GUI thread: it takes the writer lock, which a running index holds
        run_in_background(lambda: self.lib.set_folder_paused(folder, not paused), done,
                          self._on_error, owner=self)  # fmt: skip

    def _mode_changed(self, mode: str) -> None:
        self.search_opts = self.search_opts.with_overrides(mode=mode)
        save_search_settings(self.settings, self.search_opts)

    def _answer_link(self, link: str) -> None:
        """"Show the closest passage" under a no-answer: one click to see what was near."""
        result = self.last_result
        if link != "#closest" or result is None or result.closest is None:
            return
        self.results.clear()
        item = self._add_result(result.closest, cite([result.closest])[0],
                                query_terms(result.query))  # fmt: skip
        self.results.setCurrentItem(item)

    def edit_settings(self) -> None:
        cal = self.lib.calibration
        dialog = SettingsDialog(self.search_opts, self, None if cal is None else (cal.floor, cal.weak))
        if dialog.exec():
            self.search_opts = dialog.options(self.search_opts)
            save_search_settings(self.settings, self.search_opts)
            self.mode.setCurrentText(self.search_opts.mode)

    def refresh_documents(self) -> None:
        """Folders and documents, read off the GUI thread (a library can hold 50,000)."""
        self._last_refresh = time.monotonic()
        run_in_background(
            lambda: (self.lib.folders(), self.lib.status().documents),
            self._show_documents,
            self._on_error,
            owner=self,
        )

    def _show_documents(self, data) -> None:
        folders, docs = data
        self.folder_list.clear()
        for folder, paused in folders:
            item = QListWidgetItem(f"{folder}{'   (paused)' if paused else ''}")
            item.setData(Qt.UserRole, folder)
            self.folder_list.addItem(item)
        self.doc_model.set_documents(docs)
        failed = sum(1 for d in docs if d.state == "failed")
        self.retry_btn.setText(f"Retry failed ({failed})")
        self.retry_btn.setEnabled(failed > 0)
        self.tabs.setTabText(1, f"Documents ({len(docs)})")
        self.documents_shown += 1

    # -- search ---------------------------------------------------------------------------
    def run_search(self) -> None:
        q = self.query.text().strip()
        if not q:
            return
        if not self.ready:
            self.status_label.setText("The model is still loading; search in a moment.")
            return
        opts = self.search_opts
        started = time.perf_counter()
        run_in_background(
            lambda: self.lib.search(q, opts),
            lambda r: self.show_result(r, time.perf_counter() - started),
            lambda e: self.answer.setText(f"<p><b>{html.escape(str(e))}</b></p>"),
            owner=self,
        )

    def show_result(self, result: SearchResult, seconds: float = 0.0) -> None:
        self.last_result = result
        self.results.clear()
        if result.state == "no_answer":
            more = (" <a href='#closest'>Show the closest passage</a>"
                    if result.closest is not None else "")  # fmt: skip
            self.answer.setText(
                f"<h3>No answer</h3><p>Nothing in your library is close enough to "
                f"“{html.escape(result.query)}”: {html.escape(result.reason or '')}.{more}</p>"
            )
            return
        note = "Only weak matches — read with care. " if result.state == "weak" else ""
        self.answer.setText(
            f"{note}{len(result.hits)} passages ({result.channel}, {seconds * 1000:.0f} ms)"
            + (f", {result.dropped} below the floor hidden" if result.dropped else "")
        )
        terms = query_terms(result.query)
        for h, c in zip(result.hits, cite(result.hits), strict=True):
            self._add_result(h, c, terms)
        self._resize_result_rows()
        if self.results.count():
            self.results.setCurrentRow(0)


    def _add_result(self, h, c, terms: list[str]) -> QListWidgetItem:
        item = QListWidgetItem()
        item.setData(Qt.UserRole, h)
        item.setToolTip(f"{h.path}{c.fragment}")
        label = QLabel(result_html(h, c, terms))
        label.setWordWrap(True)
        label.setTextFormat(Qt.RichText)
        label.setContentsMargins(6, 4, 6, 6)
        label.setAttribute(Qt.WA_TransparentForMouseEvents)
        self.results.addItem(item)
        self.results.setItemWidget(item, label)
        item.setSizeHint(label.sizeHint().expandedTo(label.minimumSizeHint()))
        return item
    def _resize_result_rows(self) -> None:
        width = max(200, self.results.viewport().width() - 2)
        for i in range(self.results.count()):
            item = self.results.item(i)
            label = self.results.itemWidget(item)
            if label is not None:
                label.setFixedWidth(width)
                item.setSizeHint(QSize(width, label.heightForWidth(width) + 2))

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._resize_result_rows()

    def open_result(self, item: QListWidgetItem) -> None:
        hit = item.data(Qt.UserRole)
        self.viewer.show_hit(self.lib, hit)
        self.open_external.setEnabled(True)

    def open_in_default_app(self) -> None:
        item = self.results.currentItem()
        if item is None:
            return
        hit = item.data(Qt.UserRole)
        url = QUrl.fromLocalFile(hit.path)
        if hit.page_from and hit.kind == "pdf":  # PDF viewers honour #page=N
            url.setFragment(f"page={hit.page_from}")
        QDesktopServices.openUrl(url)

    def copy_as_prompt(self) -> None:
        if self.last_result is None:
            return
        prompt = build_context(self.last_result.query, cite(self.last_result.hits))
        QGuiApplication.clipboard().setText(prompt)
        self.status_label.setText("The numbered-sources prompt is on the clipboard.")

    def keyPressEvent(self, event) -> None:  # noqa: N802
        if event.key() == Qt.Key_Escape:
            self.query.setFocus()
            self.query.selectAll()
            return
        if self.query.hasFocus() and event.key() == Qt.Key_Down and self.results.count():
            self.results.setFocus()
            return
        super().keyPressEvent(event)

    def closeEvent(self, event) -> None:  # noqa: N802
        self.settings.setValue("geometry", self.saveGeometry())
        if self.index_thread is not None:
            self.index_thread.cancel()
            self.index_thread.wait(30000)
        super().closeEvent(event)


__all__ = ["MainWindow"]
