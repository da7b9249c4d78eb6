"""Documents and their content (canonical text, pages): every query about a document.

Paths cross this boundary as the operating system's names (surrogate-escaped str) and are
stored through kbapp.paths.to_db, so a name that is not valid UTF-8 is just a name.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from ..paths import from_db, to_db
from .chunks import quote_crc

if TYPE_CHECKING:
    from .base import Connection as Store

# The columns a status listing shows, in DocumentRow's order.
@dataclass(frozen=True)
class DocumentRow:
    id: int
    path: str
    name: str
    title: str | None
    kind: str | None
    state: str
    reason: str | None
    warnings: list[str]
    pages: int | None
    ocr_pages: int | None
    ocr_confidence: float | None
    needs_ocr_pages: int | None
    chunks: int | None
    split_for_window: int | None
    indexed_at: float | None
    model: str | None
    pipeline_version: str | None
    extractor_version: str | None


STATUS_COLUMNS = tuple(f.name for f in fields(DocumentRow))  # the documents table's own names


@dataclass(frozen=True)
class Known:
    """What the library remembers of a file, to decide whether it must be indexed again."""

    id: int
    size: int | None
    mtime: float | None
    state: str
    stamp: tuple[str | None, str | None, str | None]  # extractor, pipeline, model
    retry_after: float | None = None


def _like_prefix(prefix: str) -> str:
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


# What a commit writes of each page and chunk, named once; the INSERTs are made from these.
PAGE_COLUMNS = ("number", "char_from", "char_to", "ocr", "ocr_confidence", "needs_ocr", "boxes")
CHUNK_COLUMNS = ("seq", "section", "char_from", "char_to", "page_from", "page_to", "content",
                 "text", "tokens", "locator", "symbol", "line_from", "line_to")  # fmt: skip


def _insert(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT INTO {table}({', '.join(columns)}) VALUES({','.join('?' * len(columns))})"


_INSERT_PAGE = _insert("pages", ("doc_id", *PAGE_COLUMNS))
_INSERT_CHUNK = _insert("chunks", ("doc_id", *CHUNK_COLUMNS, "vector", "crc", "sentence_vectors"))


class Documents:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.conn: sqlite3.Connection = store.conn

    # -- reading --------------------------------------------------------------------------
    def known(self, path: str) -> Known | None:
        row = self.conn.execute(
            "SELECT id, size, mtime, state, extractor_version, pipeline_version, model, "
            "retry_after FROM documents WHERE path=?",
            (to_db(path),),
        ).fetchone()
        if row is None:
            return None
        doc_id, size, mtime, state, extractor, pipeline, model, retry_after = row
        return Known(doc_id, size, mtime, state, (extractor, pipeline, model), retry_after)

    def tries(self, doc_id: int) -> int:
        row = self.conn.execute("SELECT tries FROM documents WHERE id=?", (doc_id,)).fetchone()
        return int(row[0] or 0) if row else 0

    def id_of(self, path: str) -> int | None:
        row = self.conn.execute("SELECT id FROM documents WHERE path=?", (to_db(path),)).fetchone()
        return int(row[0]) if row else None

    def path_of(self, doc_id: int) -> str | None:
        row = self.conn.execute("SELECT path FROM documents WHERE id=?", (doc_id,)).fetchone()
        return from_db(row[0]) if row else None

    def ids_in_state(self, state: str) -> list[int]:
        return [r[0] for r in self.conn.execute("SELECT id FROM documents WHERE state=?", (state,))]

    def ids_in_folder(self, folder_id: int) -> list[int]:
        return [
            r[0] for r in self.conn.execute("SELECT id FROM documents WHERE folder_id=?", (folder_id,))
        ]

    def under(self, folder: str) -> list[tuple[int, str]]:
        """(id, path) of every document below a folder (path prefix, not string prefix)."""
        prefix = to_db(folder.rstrip("/") + "/")
        return [
            (did, from_db(p))
            for did, p in self.conn.execute(
                "SELECT id, path FROM documents WHERE path LIKE ? ESCAPE '\\'",
                (_like_prefix(prefix),),
            )
        ]

    def unchanged(self, doc_id: int, digest: str, stamp: tuple[str, str, str]) -> bool:
        """Was this exact content already indexed with this extractor, pipeline and model?"""
        return (
            self.conn.execute(
                "SELECT 1 FROM documents WHERE id=? AND content_hash=? AND extractor_version=? "
                "AND pipeline_version=? AND model=? AND chunks IS NOT NULL",
                (doc_id, digest, *stamp),
            ).fetchone()
            is not None
        )

    def state_counts(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT state, count(*) FROM documents GROUP BY state"))

    def indexed_with_other_model(self, model: str) -> int:
        return int(
            self.conn.execute(
                "SELECT count(*) FROM documents WHERE state='indexed' AND model IS NOT ?", (model,)
            ).fetchone()[0]
        )

    def status_rows(self) -> list[DocumentRow]:
        out = []
        cols = ", ".join(STATUS_COLUMNS)
        for r in self.conn.execute(f"SELECT {cols} FROM documents ORDER BY path"):
            row = dict(zip(STATUS_COLUMNS, r, strict=True))
            row["path"], row["name"] = from_db(row["path"]), from_db(row["name"])
            row["warnings"] = json.loads(row["warnings"]) if row["warnings"] else []
            out.append(DocumentRow(**row))
        return out

    def text(self, doc_id: int) -> str | None:
        row = self.conn.execute("SELECT text FROM texts WHERE doc_id=?", (doc_id,)).fetchone()
        return row[0] if row else None

    def pages(self, doc_id: int) -> list[tuple[int, int, int]]:
        """(page number, char_from, char_to) for a paged document."""
        return list(
            self.conn.execute(
                "SELECT number, char_from, char_to FROM pages WHERE doc_id=? ORDER BY number",
                (doc_id,),
            )
        )

    def located(self, doc_id: int) -> list[tuple[str | None, int, int]]:
        """(locator, char_from, char_to) of a document's passages, in text order."""
        return list(self.conn.execute(
            "SELECT locator, char_from, char_to FROM chunks WHERE doc_id=? ORDER BY char_from",
            (doc_id,),
        ))  # fmt: skip

    def page_boxes(self, doc_id: int, page: int) -> list[tuple] | None:
        row = self.conn.execute(
            "SELECT boxes FROM pages WHERE doc_id=? AND number=?", (doc_id, page)
        ).fetchone()
        return [tuple(b) for b in json.loads(row[0])] if row and row[0] else None

    def totals(self) -> tuple[int, int, int, int, int]:
        """Indexed documents, chunks, chunks split for the window, header and total tokens."""
        row = self.conn.execute(
            "SELECT count(*), coalesce(sum(chunks),0), coalesce(sum(split_for_window),0), "
            "coalesce(sum(header_tokens),0), coalesce(sum(total_tokens),0) "
            "FROM documents WHERE state='indexed'"
        ).fetchone()
        return tuple(int(x) for x in row)  # type: ignore[return-value]

    # -- writing (callers hold the writer lock) --------------------------------------------
    def add(self, path: str, folder_id: int | None, name: str, size: int, mtime: float,
            state: str = "queued", kind: str | None = None, reason: str | None = None) -> int:  # fmt: skip
        table = self.store.db["documents"]
        with self.store.atomic():
            table.insert({
                "path": to_db(path), "folder_id": folder_id, "name": to_db(name), "kind": kind,
                "size": size, "mtime": mtime, "state": state, "reason": reason,
                "updated_at": time.time(),
            })  # fmt: skip
            return int(table.last_pk)

    def set_state(self, doc_ids: Iterable[int], state: str, **columns: Any) -> None:
        ids = list(doc_ids)
        if not ids:
            return
        updates = {"state": state, "updated_at": time.time(), **columns}
        sets = ", ".join(f"{k}=?" for k in updates)
        with self.store.atomic() as conn:
            conn.executemany(
                f"UPDATE documents SET {sets} WHERE id=?", [(*updates.values(), i) for i in ids]
            )

    def start_reading(self, doc_id: int) -> None:
        """A queued document handed to a worker is `indexing`, so every view (the window's
        table, `kbapp status` in another process) names the one the progress line names.
        An indexed document being read again keeps its state: it stays searchable."""
        with self.store.atomic() as conn:
            conn.execute("UPDATE documents SET state='indexing' WHERE id=? AND state='queued'",
                         (doc_id,))  # fmt: skip

    def move_state(self, old: str, new: str) -> int:
        """Every document in state `old` goes to `new` (a crash's `indexing` is queued)."""
        with self.store.atomic() as conn:
            return conn.execute("UPDATE documents SET state=? WHERE state=?", (new, old)).rowcount

    def mark_stale(self, stamp: tuple[str, str, str]) -> int:
        """Documents indexed with another extractor, pipeline or model: stale, never mixed."""
        with self.store.atomic() as conn:
            return conn.execute(
                "UPDATE documents SET state='stale' WHERE state='indexed' AND "
                "(extractor_version IS NOT ? OR pipeline_version IS NOT ? OR model IS NOT ?)",
                stamp,
            ).rowcount

    def _remove_content(self, doc_id: int) -> list[int]:
        conn = self.conn
        old = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE doc_id=?", (doc_id,))]
        conn.executemany("DELETE FROM chunks_fts WHERE rowid=?", [(i,) for i in old])
        conn.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
        conn.execute("DELETE FROM pages WHERE doc_id=?", (doc_id,))
        conn.execute("DELETE FROM texts WHERE doc_id=?", (doc_id,))
        return old

    def clear(self, doc_id: int, state: str, reason: str | None,
              extra: dict[str, Any] | None = None) -> tuple[list[int], int | None]:  # fmt: skip
        """Drop a document's content and give it a state; (old chunk ids, new generation)."""
        with self.store.atomic():
            old = self._remove_content(doc_id)
            self.store.db["documents"].update(doc_id, {
                "state": state, "reason": reason, "chunks": None, "indexed_at": None,
                "content_hash": None, "updated_at": time.time(), **(extra or {}),
            })  # fmt: skip
            gen = self.store.bump_generation() if old else None
        return old, gen

    def delete(self, doc_id: int) -> tuple[list[int], int]:
        with self.store.atomic() as conn:
            old = self._remove_content(doc_id)
            conn.execute("DELETE FROM documents WHERE id=?", (doc_id,))
            gen = self.store.bump_generation()
        return old, gen

    def commit(self, doc_id: int, text: str, pages: list[dict], chunks: list[Any],
               vectors: list[bytes], fts: list[str], columns: dict[str, Any],
               sentences: list[bytes | None],
               ) -> tuple[list[int], list[int], int]:  # fmt: skip
        """Swap a document's content for a new version in one transaction: text, pages,
        chunks with their vectors (and their sentences' vectors, None for a passage of one
        sentence), FTS rows and the document's own columns (state 'indexed'). A page is a
        dict of PAGE_COLUMNS; a chunk anything with CHUNK_COLUMNS as attributes
        (kbapp.chunk.Chunk). Returns (old chunk ids, new chunk ids, generation)."""
        with self.store.atomic() as conn:
            old = self._remove_content(doc_id)
            conn.execute("INSERT INTO texts(doc_id, text) VALUES(?, ?)", (doc_id, text))
            conn.executemany(_INSERT_PAGE, [(doc_id, *(p[k] for k in PAGE_COLUMNS)) for p in pages])
            ids = []
            for c, vec, sent in zip(chunks, vectors, sentences, strict=True):
                values = (getattr(c, k) for k in CHUNK_COLUMNS)
                cur = conn.execute(_INSERT_CHUNK, (doc_id, *values, vec, quote_crc(c.content), sent))
                ids.append(int(cur.lastrowid))
            conn.executemany(
                "INSERT INTO chunks_fts(rowid, text) VALUES(?, ?)", list(zip(ids, fts, strict=True))
            )
            updates = {"state": "indexed", "reason": None, "updated_at": time.time(), **columns}
            self.store.db["documents"].update(doc_id, updates)
            gen = self.store.bump_generation()
        return old, ids, gen
