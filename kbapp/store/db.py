"""The library database: schema, ordered migrations (with a backup first), WAL, atomic().

SQLite is the source of truth: documents, canonical texts, pages, chunks with their vectors,
FTS5 rows, stamps and states. The hnswlib file beside it is a cache (store/vectors.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import sqlite_utils

from ..errors import LibraryError
from .chunks import Chunks
from .documents import Documents
from .folders import Folders
from .schema import MIGRATIONS, SCHEMA_VERSION

log = logging.getLogger(__name__)

DB_NAME = "library.db"
MIGRATE_LOCK = "migrate.lock"



def _private_umask() -> int:
    return os.umask(0o077)


class Store:
    """One SQLite connection (use one per thread) with WAL, foreign keys and atomic()."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / DB_NAME
        old = _private_umask()
        try:
            root.mkdir(parents=True, exist_ok=True, mode=0o700)
            # Autocommit: only atomic() opens transactions, so nothing holds a write lock
            # by accident between statements.
            conn = sqlite3.connect(
                self.path, timeout=30, check_same_thread=False, isolation_level=None
            )
        except (OSError, sqlite3.Error) as exc:
            raise LibraryError(f"cannot open the library at {root}: {exc}") from exc
        finally:
            os.umask(old)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
        self.db = sqlite_utils.Database(conn)
        self.conn = conn
        self._depth = 0
        self.documents = Documents(self)
        self.folders = Folders(self)
        self.chunks = Chunks(self)
        self.migrate()

    def version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self) -> None:
        """Bring the schema up to this kbapp's. Two processes opening a library after an
        upgrade take turns (a lock file beside the database): the second reads the version
        the first left, instead of migrating again and being told the library is damaged."""
        if self.version() == SCHEMA_VERSION:  # the common case: nothing to wait for
            return
        with open(self.root / MIGRATE_LOCK, "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._migrate()

    def _migrate(self) -> None:
        current = self.version()
        if current > SCHEMA_VERSION:
            raise LibraryError(
                f"the library at {self.root} was written by a newer kbapp "
                f"(schema {current} > {SCHEMA_VERSION}); upgrade kbapp to open it"
            )
        if current == SCHEMA_VERSION:
            return
        if current > 0:
            backup = self.path.with_name(f"{DB_NAME}.bak-v{current}-{int(time.time())}")
            log.info("backing up the library to %s before migrating", backup)
            with sqlite3.connect(backup) as dst:
                self.conn.backup(dst)
        for version in range(current, SCHEMA_VERSION):
            self.conn.executescript(
                f"BEGIN IMMEDIATE;{MIGRATIONS[version]};PRAGMA user_version={version + 1};COMMIT;"
            )

    @contextlib.contextmanager
    def atomic(self) -> Iterator[sqlite3.Connection]:
        """A transaction: everything inside appears at once or not at all. Nests."""
        outer = self._depth == 0
        if outer and not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")
        self._depth += 1
        try:
            yield self.conn
        except BaseException:
            self._depth -= 1
            if outer and self.conn.in_transaction:
                self.conn.rollback()
            raise
        else:
            self._depth -= 1
            if outer and self.conn.in_transaction:
                self.conn.commit()

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        with self.atomic():
            self.db["meta"].upsert({"key": key, "value": value}, pk="key")

    def bump_generation(self) -> int:
        """Counts every change to the searchable chunks; the vector cache records it."""
        gen = int(self.get_meta("generation", "0") or 0) + 1
        self.set_meta("generation", str(gen))
        return gen

    def check_model(self, model: str, dims: int) -> None:
        """A local library takes another model by re-embedding (documents go stale)."""

    def generation(self) -> int:
        return int(self.get_meta("generation", "0") or 0)

    def integrity(self) -> list[str]:
        """SQLite's own check of every page and index (quick_check): [] when sound."""
        try:
            rows = [r[0] for r in self.conn.execute("PRAGMA quick_check")]
        except sqlite3.DatabaseError as exc:
            return [str(exc)]
        return [] if rows == ["ok"] else rows

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()
