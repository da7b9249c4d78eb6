"""Watching the library's folders while the window is open, with watchdog (inotify on
Linux, FSEvents on macOS, ReadDirectoryChangesW on Windows).

Each unpaused folder is watched with all its subfolders. A file created, edited, moved or
deleted is heard, and a burst of events becomes one incremental index run (debounced).
What the indexer never reads is never a reason to run it: hidden and temporary names
(`is_ignored`), and the library's own folder when it lies inside a watched one (its writes,
folders.json and the vector cache, would start an index run after every index run). A
periodic incremental scan (stat only, off the GUI thread) stays as the safety net for
what a file system does not report (network shares).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from ..index import is_ignored

log = logging.getLogger(__name__)

DEBOUNCE_MS = 1500
RESCAN_MS = 300_000
# What changes a document: reading a file (the indexer does) opens and closes it unwritten.
_CHANGES = {"created", "deleted", "modified", "moved", "closed"}


def folders_to_watch(folders: list[tuple[str, bool]],
                     library: str | os.PathLike[str] | None = None) -> list[str]:  # fmt: skip
    """The unpaused folders that exist, never the library's own folder or one inside it."""
    own = str(Path(library).resolve()) if library is not None else None
    return [f for f, paused in folders
            if not paused and Path(f).is_dir() and not (own and inside(f, own))]  # fmt: skip


def inside(path: str, folder: str) -> bool:
    """path is folder or lies below it (`/docs2` is not inside `/docs`)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class _Heard(FileSystemEventHandler):
    """Runs on watchdog's thread: only says that something that matters changed."""

    def __init__(self, watcher: FolderWatcher, root: str, library: str | None) -> None:
        self.watcher, self.root, self.library = watcher, root, library

    def _matters(self, path: str) -> bool:
        if self.library and inside(path, self.library):
            return False
        rel = os.path.relpath(path, self.root)
        return not any(is_ignored(part) for part in Path(rel).parts if part != ".")

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in _CHANGES:
            return
        if event.event_type == "modified" and event.is_directory:
            return  # a folder "modified" is its entries changing: heard as their own events
        paths = [p for p in (event.src_path, getattr(event, "dest_path", "")) if p]
        if any(self._matters(os.fsdecode(p)) for p in paths):
            self.watcher.heard.emit()


class FolderWatcher(QObject):
    """Emits `changed` once a burst of file events has settled, and every RESCAN_MS."""

    changed = Signal()
    heard = Signal()  # emitted from watchdog's thread, delivered on the GUI thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self.rescan = QTimer(self, interval=RESCAN_MS)
        self.heard.connect(self.debounce.start, Qt.QueuedConnection)
        self.debounce.timeout.connect(self.changed)
        self.rescan.timeout.connect(self.changed)
        self._observer = Observer()
        self._observer.daemon = True
        self._watches: dict[str, object] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        self.rescan.start()
        if not self._observer.is_alive():
            self._observer.start()

    def watch(self, folders: list[str], library: str | os.PathLike[str] | None = None) -> None:
        """Watch these folders and everything below them (any thread: watchdog walks a
        folder's tree as it starts watching it, so the window asks off its GUI thread)."""
        own = str(Path(library).resolve()) if library is not None else None
        for folder in folders:
            with self._lock:
                if folder in self._watches:
                    continue
            try:
                watch = self._observer.schedule(_Heard(self, folder, own), folder, recursive=True)
            except OSError as exc:  # the folder went away, or the system's watch budget ran out
                log.warning("cannot watch %s (%s); the periodic scan still finds its changes",
                            folder, exc)  # fmt: skip
                continue
            with self._lock:
                self._watches[folder] = watch

    def unwatch(self, folder: str) -> None:
        with self._lock:
            gone = [(d, w) for d, w in self._watches.items() if inside(d, folder)]
            for d, _ in gone:
                del self._watches[d]
        for _, watch in gone:
            self._observer.unschedule(watch)

    def directories(self) -> list[str]:
        """The folders watched (each with everything below it)."""
        with self._lock:
            return sorted(self._watches)

    def stop(self) -> None:
        self.rescan.stop()
        if self._observer.is_alive():
            self._observer.stop()
            self._observer.join(timeout=5)
