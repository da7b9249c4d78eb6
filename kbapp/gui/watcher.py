"""Watching the library's folders while the window is open.

QFileSystemWatcher hears files appear, vanish and get renamed in the folders it watches;
a burst of events becomes one incremental index run (debounced). Edits in place are not
always heard, so a periodic incremental scan (stat only, off the GUI thread) catches them.
The folders to watch are found with the indexer's own rules (`is_ignored`): a folder the
indexer skips (`.git`, hidden, temporary) is never watched.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from ..index import is_ignored

MAX_WATCHED = 4000  # inotify watches are a per-user budget; the periodic scan covers the rest
DEBOUNCE_MS = 1500
RESCAN_MS = 60_000


def folders_to_watch(folders: list[tuple[str, bool]], limit: int = MAX_WATCHED,
                     library: str | os.PathLike[str] | None = None) -> list[str]:  # fmt: skip
    """Every unpaused folder and its subfolders the indexer reads (runs off the GUI thread),
    never the library's own folder: its writes (folders.json, the vector cache) would
    wake the watcher after every index run, an index run every ~1.5 s."""
    own = str(Path(library).resolve()) if library is not None else None
    out: list[str] = []
    for folder, paused in folders:
        if paused or not Path(folder).is_dir() or (own and inside(folder, own)):
            continue
        for dirpath, dirnames, _ in os.walk(folder, followlinks=False):
            dirnames[:] = sorted(
                d for d in dirnames
                if not is_ignored(d) and not (own and inside(os.path.join(dirpath, d), own))
            )  # fmt: skip
            out.append(dirpath)
            if len(out) >= limit:
                return out
    return out


def inside(path: str, folder: str) -> bool:
    """path is folder or lies below it (`/docs2` is not inside `/docs`)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class FolderWatcher(QObject):
    """Emits `changed` once a burst of file events has settled, and every RESCAN_MS."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.fs = QFileSystemWatcher(self)
        self.debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self.rescan = QTimer(self, interval=RESCAN_MS)
        self.fs.directoryChanged.connect(lambda _: self.debounce.start())
        self.debounce.timeout.connect(self.changed)
        self.rescan.timeout.connect(self.changed)

    def start(self) -> None:
        self.rescan.start()

    def watch(self, dirs: list[str]) -> None:
        known = set(self.fs.directories())
        new = [d for d in dirs if d not in known]
        if new:
            self.fs.addPaths(new)

    def unwatch(self, folder: str) -> None:
        gone = [d for d in self.fs.directories() if inside(d, folder)]
        if gone:
            self.fs.removePaths(gone)

    def directories(self) -> list[str]:
        return self.fs.directories()
