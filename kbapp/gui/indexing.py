"""The window's folders and indexing: adding folders (drop, dialog), the watcher, index
runs on their own thread with progress, retry, cancel, pause and remove. A part of
MainWindow (kbapp.gui.main_window), kept apart because it is one idea."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from PySide6.QtCore import QDir
from PySide6.QtWidgets import QFileDialog, QMessageBox

from ..wording import count
from .jobs import IndexThread
from .watcher import folders_to_watch

log = logging.getLogger(__name__)


class FoldersAndIndexing:
    """Mixed into MainWindow: uses its engine, lib, watcher, documents pane and labels."""

    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt API
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        self.add_paths(paths)

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a folder to the library",
                                                  QDir.homePath())  # fmt: skip
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
        """Watch every folder of the library with its subfolders; watchdog walks them as it
        starts, on the engine's thread, not the GUI's."""
        def watch(lib) -> None:
            self.watcher.watch(folders_to_watch(lib.folders(), library=lib.root), lib.root)

        self.engine.call(watch, lambda _: None, self._on_error, kind="watch")

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
        lib = self.lib

        def run(prog, cancel):
            done = job(prog, cancel)
            return done, len(lib.vectors)  # counted here: hnswlib stays off the GUI thread

        t = IndexThread(run)
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
        moved = p.current != self._last_current  # the table names what the status bar names
        self._last_current = p.current
        if moved or p.done == p.total or time.monotonic() - self._last_refresh > 2.0:
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
        if self.settings_unsaved:
            self.save_search_settings()
        if self.pending_index:
            self.pending_index = False
            self.reindex()

    def _on_indexed(self, result) -> None:
        p, vectors = result
        searchable = f"{count(vectors, 'passage')} searchable"
        if p.cancelled:
            text = f"Indexing cancelled after {p.done} of {count(p.total, 'document')}; {searchable}."
        elif p.total == 0:
            text = f"Up to date: {searchable}."
        else:
            text = f"Indexed {p.indexed}, failed {p.failed}: {count(p.chunks, 'passage')} written; {searchable}."
        self.status_label.setText(text)
        self.status_label.setToolTip(p.time_spent())  # where the run's time went
        self._finish_thread()

    def _on_index_failed(self, exc: Exception) -> None:
        self.status_label.setText(f"Indexing stopped: {exc}")
        self._finish_thread()

    def _selected_folder(self) -> str | None:
        return self.docs_pane.selected_folder()

    def remove_folder(self, confirm: bool = True) -> None:
        folder = self._selected_folder()
        if folder is None or self.index_thread is not None:
            self.status_label.setText("Select a folder (and wait for indexing to finish).")
            return
        if confirm and QMessageBox.question(
            self, "Remove folder",
            f"Remove {folder} from the library?\n\nIts documents leave the index (the files "
            "themselves are not touched); adding it again means reading them all again.",
        ) != QMessageBox.Yes:  # fmt: skip
            return
        self.watcher.unwatch(folder)
        self.status_label.setText(f"Removing {folder}…")

        def done(n: int) -> None:
            self.status_label.setText(f"Removed {folder}: {count(n, 'document')} left the index.")
            self.refresh_documents()

        self.engine.call(lambda lib: lib.remove_folder(folder), done,
                         lambda e: self.status_label.setText(str(e)))  # fmt: skip

    def toggle_pause(self) -> None:
        folder = self._selected_folder()
        if folder is None:
            return
        def toggle(lib) -> bool:
            paused = dict(lib.folders()).get(folder, False)
            lib.set_folder_paused(folder, not paused, wait=True)  # the cancelled run ends first
            return paused

        if self.index_thread is not None:  # pausing means: stop reading it now
            self.pending_index = True  # the other folders go on after the pause is stored
            self.index_thread.cancel()

        def done(was_paused: bool) -> None:
            self.refresh_documents()
            if was_paused:
                self.reindex()

        self.engine.call(toggle, done, self._on_error)

    def retry_document(self, path: str) -> None:
        if self.index_thread is None and self.ready:
            self._start(lambda prog, cancel: self.lib.retry(path, progress=prog))

