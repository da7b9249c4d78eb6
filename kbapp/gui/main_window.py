"""The main window: documents panel, search pane with results, and the source viewer."""

from __future__ import annotations

import logging
import time

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QLabel,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)  # fmt: skip

from ..cite import build_context, cite
from ..errors import KbError, LibraryBusy
from ..extract.ocr import tesseract_available
from ..library import Library
from ..search import SearchResult
from ..wording import count
from .documents import DocumentsPane, open_with_system
from .engine import Engine
from .indexing import FoldersAndIndexing
from .jobs import IndexThread
from .search_pane import SearchPane
from .settings_dialog import SettingsDialog
from .viewer import SourceViewer
from .watcher import FolderWatcher

log = logging.getLogger(__name__)

FOLLOW_MS = 2000
LOADING_SEARCH = "Loading the model… your search runs as soon as it is ready."


class MainWindow(FoldersAndIndexing, QMainWindow):
    def __init__(self, library: Library) -> None:
        super().__init__()
        self.lib = library  # used only on the engine and indexing threads
        self.engine = Engine(library, self)
        self.settings = QSettings("kbapp", "kbapp")
        self.setWindowTitle("kbapp — your local knowledge base")
        self.setAcceptDrops(True)
        self.index_thread: IndexThread | None = None
        self.pending_index = False
        self.new_paths: list[str] = []  # added folders the next indexing run registers
        self.ready = False
        self.last_result: SearchResult | None = None
        self.last_seconds = 0.0
        self.searched = False  # once a search was asked, its answer owns the answer line
        self._last_refresh = 0.0
        self._last_current = ""
        self._refreshing = self._refresh_again = False  # one documents request at a time
        self.documents_shown = 0  # how many refreshes reached the table (tests wait on it)

        self.search_pane = SearchPane(str(library.root))
        self.docs_pane = DocumentsPane()
        # the widgets tests and shortcuts reach, by their old names
        sp, dp = self.search_pane, self.docs_pane
        self.query, self.mode, self.copy_prompt = sp.query, sp.mode, sp.copy_prompt
        self.answer, self.empty_add, self.results, self.notice = (
            sp.answer, sp.empty_add, sp.results, sp.notice)  # fmt: skip
        self.doc_model, self.docs, self.folder_list = dp.doc_model, dp.docs, dp.folder_list
        self.retry_btn, self.add_btn, self.cancel_btn = dp.retry_btn, dp.add_btn, dp.cancel_btn
        self.remove_btn, self.pause_btn = dp.remove_btn, dp.pause_btn
        # the library's own settings (shared with `kbapp settings`) arrive with the warm-up
        self.search_opts = library.settings.search
        self.settings_unsaved = False
        self.mode.setCurrentText(self.search_opts.mode)
        self.answer.linkActivated.connect(self._answer_link)
        self.empty_add.clicked.connect(self.choose_folder)
        dp.retry_requested.connect(self.retry_document)
        for combo in (sp.folder_filter, sp.kind_filter, sp.since_filter):  # search again
            combo.currentIndexChanged.connect(lambda _: self.searched and self.run_search())
        sp.scope_reset.connect(lambda: self.searched and self.run_search())
        sp.group.toggled.connect(lambda _: self.last_result is not None
                                 and self.show_result(self.last_result, self.last_seconds))  # fmt: skip
        dp.notice.connect(lambda text: self.status_label.setText(text))

        self.viewer = SourceViewer()
        self.viewer.engine = self.engine
        self.open_external = QPushButton("Open in default app")
        self.open_external.setEnabled(False)
        viewer_pane = QWidget()
        vl = QVBoxLayout(viewer_pane)
        vl.addWidget(self.viewer, 1)
        vl.addWidget(self.open_external)

        self.tabs = QTabWidget()
        self.tabs.addTab(self.search_pane, "Search")
        self.tabs.addTab(self.docs_pane, "Documents")
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
        menu.addSeparator()
        quit_act = QAction("Quit", self)
        quit_act.setShortcut(QKeySequence.Quit)
        quit_act.setShortcutContext(Qt.ApplicationShortcut)
        quit_act.triggered.connect(self.close)
        menu.addAction(quit_act)
        self.quit_action = quit_act

        self.query.returnPressed.connect(self.run_search)
        self.mode.currentTextChanged.connect(self._mode_changed)
        self.results.itemActivated.connect(self.open_result)
        self.results.itemClicked.connect(self.open_result)
        self.copy_prompt.clicked.connect(self.copy_as_prompt)
        self.add_btn.clicked.connect(self.choose_folder)
        self.retry_btn.clicked.connect(self.retry_failed)
        self.cancel_btn.clicked.connect(self.cancel_indexing)
        self.open_external.clicked.connect(self.open_in_default_app)
        # not connect(self.remove_folder): clicked passes checked=False, which was taken
        # for confirm=False and removed the folder without asking
        self.remove_btn.clicked.connect(lambda: self.remove_folder(confirm=True))
        self.pause_btn.clicked.connect(self.toggle_pause)

        self.watcher = FolderWatcher(self)
        self.watcher.changed.connect(self.reindex)
        self.rescan = self.watcher.rescan
        # Another kbapp process (the CLI) may commit to this library: the documents table
        # follows its commits as searches do (the library's generation counter).
        self.follow = QTimer(self, interval=FOLLOW_MS)
        self.follow.timeout.connect(self._check_generation)
        self._generation: int | None = None

        geometry = self.settings.value("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1280, 800)
        self.query.setFocus()
        self.refresh_documents()
        # the window appears first; the model and vector cache load on the engine thread,
        # and a search typed meanwhile waits there for them, then runs
        self.engine.call(self._warm_up, self._on_ready, self._on_error)

    # -- start-up -------------------------------------------------------------------------
    @staticmethod
    def _warm_up(lib) -> tuple[int, object]:
        _ = lib.encoder
        return len(lib.vectors), lib.search_defaults, lib.store.generation()

    def _on_ready(self, ready: tuple) -> None:
        vectors, self.search_opts, self._generation = ready
        self.mode.blockSignals(True)
        self.mode.setCurrentText(self.search_opts.mode)
        self.mode.blockSignals(False)
        self.ready = True
        self.status_label.setText(f"Ready: {count(vectors, 'passage')} searchable.")
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
        self.watcher.start()
        self.follow.start()

    def _on_error(self, exc: Exception) -> None:
        self.status_label.setText(f"Error: {exc}")
        QMessageBox.warning(self, "kbapp", str(exc))

    def _mode_changed(self, mode: str) -> None:
        self.search_opts = self.search_opts.with_overrides(mode=mode)
        self.save_search_settings()

    def _answer_link(self, link: str) -> None:
        """"Show the closest passage" under a no-answer: one click to see what was near."""
        result = self.last_result
        if link != "#closest" or result is None or result.closest is None:
            return
        self.search_pane.show_closest(result)

    def edit_settings(self) -> None:
        self.engine.call(lambda lib: lib.calibration, self._settings_dialog, self._on_error)

    def _settings_dialog(self, cal) -> None:
        dialog = SettingsDialog(self.search_opts, self, None if cal is None else (cal.floor, cal.weak))
        if dialog.exec():
            self.search_opts = dialog.options(self.search_opts)
            self.save_search_settings()
            self.mode.setCurrentText(self.search_opts.mode)

    def _check_generation(self) -> None:
        def seen(gen: int) -> None:
            if self._generation is not None and gen != self._generation:
                self.refresh_documents()
            self._generation = gen

        self.engine.call(lambda lib: lib.store.generation(), seen, kind="generation")

    def save_search_settings(self) -> None:
        """Stored in the library for its model, where `kbapp settings` reads them. They
        apply to this window's searches at once; while an index run holds the library the
        write waits for its end (the engine thread is never held up by it)."""
        opts = self.search_opts

        def saved(_: object) -> None:
            self.settings_unsaved = False

        def busy(exc: Exception) -> None:
            if not isinstance(exc, LibraryBusy):
                self._on_error(exc)
                return
            self.settings_unsaved = True  # written again when the index run ends

        self.engine.call(lambda lib: lib.save_search_settings(opts), saved, busy,
                         kind="save-settings")  # fmt: skip

    def refresh_documents(self) -> None:
        """Folders and documents, read on the engine thread (a library can hold 50,000).
        Requests never pile up there: while one is under way, later ones become a single
        refresh after it."""
        self._last_refresh = time.monotonic()
        if self._refreshing:
            self._refresh_again = True
            return
        self._refreshing = True

        def failed(exc: Exception) -> None:
            self._refreshing = False
            self._on_error(exc)

        self.engine.call(lambda lib: (lib.folders(), lib.status().documents),
                         self._show_documents, failed)  # fmt: skip

    def _show_documents(self, data) -> None:
        self._refreshing = False
        if self._refresh_again:
            self._refresh_again = False
            self.refresh_documents()
        folders, docs = data
        self.docs_pane.show_documents(folders, docs)
        self.search_pane.set_folders([folder for folder, _ in folders])
        self.tabs.setTabText(1, f"Documents ({len(docs)})")
        if not self.searched:  # once a search was asked, its answer owns the answer line
            self.search_pane.show_intro(empty=not folders and not docs)
        self.documents_shown += 1

    # -- search ---------------------------------------------------------------------------
    def run_search(self) -> None:
        q = self.query.text().strip()
        if not q:
            return
        if not self.ready:  # it runs on the engine thread once the model is loaded
            self.status_label.setText(LOADING_SEARCH)
        self.searched = True
        opts = self.search_opts
        try:
            scope = self.search_pane.scope()
        except KbError as exc:
            self.search_pane.show_error(exc)
            return
        started = time.perf_counter()
        self.engine.call(
            lambda lib: lib.search(q, opts, scope),
            lambda r: self.show_result(r, time.perf_counter() - started),
            self.search_pane.show_error,
            kind="search",
        )

    def show_result(self, result: SearchResult, seconds: float = 0.0) -> None:
        self.last_result, self.last_seconds = result, seconds
        if self.ready:
            self.status_label.setText(self.status_label.text().replace(LOADING_SEARCH, "Ready."))
        # A new answer owns the viewer: no page, highlight or "No answer" of an older
        # search stays beside its results.
        self.viewer.clear("No answer: nothing to show." if result.state == "no_answer" else "")
        self.open_external.setEnabled(False)
        self.search_pane.show_result(result, seconds)

    def open_result(self, item: QListWidgetItem) -> None:
        hit = item.data(Qt.UserRole)
        self.viewer.request(hit)
        self.open_external.setEnabled(True)

    def open_in_default_app(self) -> None:
        item = self.results.currentItem()
        if item is None:
            return
        hit = item.data(Qt.UserRole)
        # PDF viewers honour #page=N
        page = f"page={hit.page_from}" if hit.page_from and hit.kind == "pdf" else ""
        problem = open_with_system(hit.path, page)
        if problem:
            self.status_label.setText(problem)

    def copy_as_prompt(self) -> None:
        if self.last_result is None:
            return
        hits = self.search_pane.shown_hits(self.last_result)  # numbered as the list shows
        prompt = build_context(self.last_result.query, cite(hits))
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
        self.watcher.stop()
        if self.index_thread is not None:
            self.index_thread.cancel()  # workers are killed at once; the commit in hand ends
            self.index_thread.wait(30000)
        self.engine.stop()
        super().closeEvent(event)


__all__ = ["MainWindow"]
