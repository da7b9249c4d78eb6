"""The default storage: one folder on this machine holding the SQLite database (the source
of truth), the hnswlib vector cache and the writer's lock file."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from .backend import Backend
from .cache import VectorCache
from .db import DB_NAME, Store
from .lock import WriterLock
from .vectors import INDEX_FILE, STAMP_FILE


class LocalStorage:
    kind = "local"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.writer_lock = WriterLock(root)

    def describe(self) -> str:
        return str(self.root)

    def exists(self) -> bool:
        return (self.root / DB_NAME).is_file()

    def connect(self) -> Store:
        return Store(self.root)

    def writer(self) -> Callable[[bool], AbstractContextManager[None]]:
        return self.writer_lock.hold

    def vectors(self, model: str, backend: Callable[[], Backend], dims: Callable[[], int],
                writer: Callable[..., AbstractContextManager[None]]) -> VectorCache:  # fmt: skip
        return VectorCache(self.root, model, backend, dims, writer)

    def set_aside(self) -> None:
        """The database moves to library.db.damaged-TIME (kept for the user); the vector
        cache, which it alone vouched for, is deleted."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"):
            p = self.root / name
            if p.exists():
                os.replace(p, self.root / f"{name}.damaged-{stamp}")
        for name in (INDEX_FILE, STAMP_FILE):
            (self.root / name).unlink(missing_ok=True)
