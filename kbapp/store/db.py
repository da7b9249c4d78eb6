"""The library database: schema, ordered migrations (with a backup first), WAL, atomic().

SQLite is the source of truth: documents, canonical texts, pages, chunks with their vectors,
FTS5 rows, stamps and states. The hnswlib file beside it is a cache (store/vectors.py).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import sqlite_utils

from ..errors import LibraryError

log = logging.getLogger(__name__)

DB_NAME = "library.db"

# Ordered migrations: index i upgrades user_version i to i + 1. Never edit a shipped one.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE folders (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        paused INTEGER NOT NULL DEFAULT 0,
        added_at REAL NOT NULL
    );
    CREATE TABLE documents (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        path TEXT NOT NULL UNIQUE,
        folder_id INTEGER,
        name TEXT NOT NULL,
        title TEXT,
        kind TEXT,
        size INTEGER,
        mtime REAL,
        content_hash TEXT,
        state TEXT NOT NULL,
        reason TEXT,
        warnings TEXT,
        extractor_version TEXT,
        pipeline_version TEXT,
        model TEXT,
        dims INTEGER,
        pages INTEGER,
        ocr_pages INTEGER,
        ocr_confidence REAL,
        needs_ocr_pages INTEGER,
        chunks INTEGER,
        split_for_window INTEGER,
        header_tokens INTEGER,
        total_tokens INTEGER,
        indexed_at REAL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX documents_state ON documents(state);
    CREATE TABLE texts (doc_id INTEGER PRIMARY KEY, text TEXT NOT NULL);
    CREATE TABLE pages (
        doc_id INTEGER NOT NULL,
        number INTEGER NOT NULL,
        char_from INTEGER NOT NULL,
        char_to INTEGER NOT NULL,
        ocr INTEGER NOT NULL DEFAULT 0,
        ocr_confidence REAL,
        needs_ocr INTEGER NOT NULL DEFAULT 0,
        boxes TEXT,
        PRIMARY KEY (doc_id, number)
    );
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        doc_id INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        section TEXT NOT NULL,
        char_from INTEGER NOT NULL,
        char_to INTEGER NOT NULL,
        page_from INTEGER,
        page_to INTEGER,
        content TEXT NOT NULL,
        text TEXT NOT NULL,
        tokens INTEGER,
        vector BLOB
    );
    CREATE INDEX chunks_doc ON chunks(doc_id);
    CREATE VIRTUAL TABLE chunks_fts USING fts5(text, tokenize = 'porter unicode61 remove_diacritics 2');
    """,
    # 2: removing a folder looks its documents up by folder
    "CREATE INDEX documents_folder ON documents(folder_id);",
]
SCHEMA_VERSION = len(MIGRATIONS)


def _private_umask() -> int:
    return os.umask(0o077)


class Store:
    """One SQLite connection (use one per thread) with WAL, foreign keys and atomic()."""

    def __init__(self, root: Path, readonly: bool = False) -> None:
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
        if not readonly:
            self.migrate()
        elif self.version() != SCHEMA_VERSION:
            raise LibraryError(
                f"the library at {root} has schema version {self.version()}, "
                f"this kbapp expects {SCHEMA_VERSION}; open it for writing to migrate"
            )

    def version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self) -> None:
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
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES(?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )

    def bump_generation(self) -> int:
        """Counts every change to the searchable chunks; the vector cache records it."""
        gen = int(self.get_meta("generation", "0") or 0) + 1
        self.set_meta("generation", str(gen))
        return gen

    def generation(self) -> int:
        return int(self.get_meta("generation", "0") or 0)

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()
