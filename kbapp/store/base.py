"""What a repository needs of the connection wrapper (kbapp.store.db.Store)."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from typing import Protocol

import sqlite_utils


class Connection(Protocol):
    conn: sqlite3.Connection
    db: sqlite_utils.Database

    def atomic(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def bump_generation(self) -> int: ...
