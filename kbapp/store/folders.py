"""Watched folders: path, paused flag, when added."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..paths import from_db, to_db

if TYPE_CHECKING:
    from .base import Connection as Store


class Folders:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.conn = store.conn

    def ensure(self, path: str) -> int:
        """The folder's id, adding it first when it is new (callers hold the writer lock)."""
        key = to_db(path)
        with self.store.atomic() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO folders(path, added_at) VALUES(?, ?)", (key, time.time())
            )
            return int(conn.execute("SELECT id FROM folders WHERE path=?", (key,)).fetchone()[0])

    def id_of(self, path: str) -> int | None:
        row = self.conn.execute("SELECT id FROM folders WHERE path=?", (to_db(path),)).fetchone()
        return int(row[0]) if row else None

    def remove(self, folder_id: int) -> None:
        with self.store.atomic() as conn:
            conn.execute("DELETE FROM folders WHERE id=?", (folder_id,))

    def set_paused(self, path: str, paused: bool) -> bool:
        with self.store.atomic() as conn:
            cur = conn.execute(
                "UPDATE folders SET paused=? WHERE path=?", (int(paused), to_db(path))
            )
            return cur.rowcount > 0

    def all(self) -> list[tuple[str, bool]]:
        """(path, paused) in the order they were added."""
        return [
            (from_db(r[0]), bool(r[1]))
            for r in self.conn.execute("SELECT path, paused FROM folders ORDER BY id")
        ]
