"""Chunks as search reads them: searchable rows, vectors, and the FTS5 (BM25) channel.

"Searchable" has one definition, here: a chunk of a document that is `indexed` with the
library's current model. Every channel and the vector cache use it.
"""

from __future__ import annotations

import logging
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import numpy as np

from ..paths import from_db, to_db
from .schema import FTS_TOKENIZER

if TYPE_CHECKING:
    from ..config import Scope
    from .base import Connection as Store

log = logging.getLogger(__name__)

_SEARCHABLE = "FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE d.state = 'indexed' AND d.model = ?"
# The same rows looked up by chunk id: CROSS JOIN keeps the chunks' primary key as the outer
# loop. Left to itself the planner starts from documents_state and probes every indexed
# document for each id: 26 ms for 40 ids at 84k passages, growing with the library.
_SEARCHABLE_BY_ID = _SEARCHABLE.replace(" JOIN ", " CROSS JOIN ", 1)


@dataclass(frozen=True, kw_only=True)
class Passage:
    """Where a passage stands in its document and what it says: what a search row and a
    hit (kbapp.search.result.Hit) share."""

    doc_id: int
    path: str
    name: str
    title: str | None
    kind: str | None
    section: str
    char_from: int
    char_to: int
    page_from: int | None
    page_to: int | None
    content: str
    locator: str | None = None  # the source's own address: a sheet's A1 range, code lines
    symbol: str | None = None
    line_from: int | None = None
    line_to: int | None = None


@dataclass(frozen=True, kw_only=True)
class ChunkRow(Passage):
    id: int
    text: str
    vector: bytes | None
    sentence_vectors: bytes | None = None  # float16, one per sentence (chunk.sentence_texts)

    @property
    def said(self) -> str:
        """What the passage says as it is read: its content, or (Chunk.body) a PDF table's
        rows with their headers; the text less its header line."""
        if self.text.endswith(self.content):
            return self.content
        return self.text.partition("\n")[2] if self.text.startswith("[") else self.text

    def sentences(self, dims: int) -> np.ndarray | None:
        """The passage's sentence vectors as a (sentences, dims) float32 matrix, or None."""
        if not self.sentence_vectors:
            return None
        return np.frombuffer(self.sentence_vectors, dtype=np.float16).reshape(-1, dims).astype(
            np.float32
        )


# ChunkRow's fields as columns, in one place: the document's own fields come from `d`,
# the rest from the chunk `c`.
_FROM_DOCUMENT = {"path", "name", "title", "kind"}
_ROW_FIELDS = tuple(f.name for f in fields(ChunkRow))
_ROW_COLUMNS = ", ".join(f"{'d' if n in _FROM_DOCUMENT else 'c'}.{n}" for n in _ROW_FIELDS)


def _scope_sql(scope: Scope | None) -> tuple[str, list]:
    """A condition on documents `d` for the scope ("" for everything) and its parameters."""
    if scope is None or scope.everything:
        return "", []
    conds, params = [], []
    if scope.folder is not None:
        folder = to_db(scope.folder.rstrip("/") or "/")
        inside = folder if folder.endswith("/") else folder + "/"
        conds.append("(d.path = ? OR substr(d.path, 1, ?) = ?)")
        params += [folder, len(inside), inside]
    if scope.kinds:
        conds.append(f"d.kind IN ({','.join('?' * len(scope.kinds))})")
        params += list(scope.kinds)
    if scope.since is not None:
        conds.append("d.mtime >= ?")
        params.append(scope.since)
    return " AND ".join(conds), params


def quote_crc(content: str) -> int:
    """The checksum stored with each quote when it is written."""
    return zlib.crc32(content.encode("utf-8", "surrogatepass"))


# The fragment as the canonical text has it (SQLite's substr counts characters, 1-based).
# Reading it loads the document's whole text, so search compares it only for rows written
# before quotes had a checksum; `kbapp check` compares every row.
_CANONICAL = "(SELECT substr(t.text, c.char_from + 1, c.char_to - c.char_from) FROM texts t WHERE t.doc_id = c.doc_id)"


class Chunks:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.conn: sqlite3.Connection = store.conn

    def mismatched(self) -> list[tuple[int, str]]:
        """(chunk id, document path) of every chunk whose content is not its slice."""
        return [
            (cid, from_db(path)) for cid, path in self.conn.execute(
                f"SELECT c.id, d.path FROM chunks c JOIN documents d ON d.id = c.doc_id "
                f"WHERE c.content IS NOT {_CANONICAL}"
            )
        ]  # fmt: skip

    def searchable_count(self, model: str) -> int:
        return int(self.conn.execute(f"SELECT count(*) {_SEARCHABLE}", (model,)).fetchone()[0])

    def searchable_ids(self, model: str, by_document: bool = False) -> list[int]:
        """`by_document`: in document path and passage order, the same order on every
        library made of the same files, whatever order they were committed in."""
        order = " ORDER BY d.path, c.seq" if by_document else ""
        return [r[0] for r in self.conn.execute(f"SELECT c.id {_SEARCHABLE}{order}", (model,))]

    def searchable_vectors(self, model: str) -> Iterator[tuple[int, bytes]]:
        yield from self.conn.execute(f"SELECT c.id, c.vector {_SEARCHABLE}", (model,))

    def vectors(self, ids: list[int]) -> Iterator[tuple[int, bytes]]:
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            yield from self.conn.execute(
                f"SELECT id, vector FROM chunks WHERE id IN ({marks})", part
            )

    def rows(self, ids: list[int], model: str) -> dict[int, ChunkRow]:
        """The searchable ones among these chunk ids, with their document's fields. A chunk
        whose quote was damaged since it was written (its checksum, or for older rows its
        slice of the canonical text, disagrees) is never returned: it is logged and left
        out, so nothing corrupted is quoted."""
        out: dict[int, ChunkRow] = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for *r, canonical in self.conn.execute(
                f"SELECT {_ROW_COLUMNS}, c.crc, CASE WHEN c.crc IS NULL THEN {_CANONICAL} END "
                f"{_SEARCHABLE_BY_ID} AND c.id IN ({marks})",
                (model, *part),
            ):
                crc = r.pop()
                values = dict(zip(_ROW_FIELDS, r, strict=True))
                if crc != quote_crc(values["content"]) if crc is not None else values["content"] != canonical:
                    log.error("chunk %d does not match its document's text: not quoted", values["id"])
                    continue
                values["path"], values["name"] = from_db(values["path"]), from_db(values["name"])
                out[values["id"]] = ChunkRow(**values)
        return out

    def fts(self, expression: str, limit: int, scope: Scope | None = None) -> list[tuple[int, float]]:
        """(chunk id, BM25 score; higher is better) for an FTS5 MATCH expression, among
        the passages of the scope's documents when one is given."""
        where, params = _scope_sql(scope)
        within = f" AND rowid IN (SELECT c.id FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE {where})" if where else ""
        rows = self.conn.execute(
            "SELECT rowid, -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?"
            f"{within} ORDER BY bm25(chunks_fts) LIMIT ?",
            (expression, *params, limit),
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def scoped_ids(self, model: str, scope: Scope) -> set[int]:
        """The searchable passages of the documents in the scope."""
        where, params = _scope_sql(scope)
        return {int(r[0]) for r in self.conn.execute(
            f"SELECT c.id {_SEARCHABLE} AND {where}", (model, *params))}  # fmt: skip

    def passages_with(self, term: str, cap: int) -> int:
        """How many passages hold `term` (one word, as the full-text index stems it),
        counted up to `cap`: enough to tell a rare word from a common one at any size."""
        return int(self.conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)",
            (f'"{term}"', cap),
        ).fetchone()[0])  # fmt: skip

    # -- evaluation and benchmarks read everything ----------------------------------------
    def all_contents(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT content FROM chunks ORDER BY id")]

    def all_texts(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT text FROM chunks ORDER BY id")]

    def all_vectors(self) -> bytes:
        return b"".join(r[0] for r in self.conn.execute("SELECT vector FROM chunks ORDER BY id"))


class _Scratch:
    """Just enough of a Store for Chunks.fts on a throwaway in-memory FTS table."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn


def scratch_fts(rows: Iterable[tuple[int, str]], path: str = ":memory:") -> Chunks:
    """An FTS5 table of (rowid, text), tokenised as the library's, in memory or in a new
    database file: for benchmarks."""
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE VIRTUAL TABLE chunks_fts USING fts5(text, tokenize = '{FTS_TOKENIZER}')")
    conn.executemany("INSERT INTO chunks_fts(rowid, text) VALUES(?, ?)", rows)
    return Chunks(_Scratch(conn))  # type: ignore[arg-type]
