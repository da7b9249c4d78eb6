"""Passages as search reads them, and dense search, on Milvus."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ...paths import from_db, to_db
from ..chunks import ChunkRow, quote_crc
from .connection import _QUOTED, _in, current, stemmed

if TYPE_CHECKING:
    from ...config import Scope

log = logging.getLogger(__name__)

# The collections these read and write (kbapp.store.milvus.store.MilvusStore, which makes
# them: named here by role, so the two modules do not import each other).
Store = Any

HELD_CACHE = 50_000  # words whose passage counts are remembered
_ROW_OUT = ["id", "doc_id", "content", "text", "vector", "sentences", "data"]


class MilvusPassages:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._docs: tuple[tuple[int, int], list[dict]] | None = None
        self._held: tuple[int, dict[tuple[str, int], int]] = (-1, {})  # generation, counts

    @property
    def name(self) -> str:
        return self.store.passages_name

    def _documents(self) -> list[dict]:
        """Every document row, read once per generation and per write of this process (a
        search asks several times which documents are searchable)."""
        key = (self.store.generation(), self.store.documents.writes)
        if self._docs is None or self._docs[0] != key:
            self._docs = (key, self.store.documents.all_rows())
        return self._docs[1]

    def searchable_docs(self, model: str) -> tuple[frozenset[int], bool]:
        """(ids of the documents whose passages are searchable, whether those are all the
        documents that hold passages)."""
        docs = self._documents()
        allowed = frozenset(d["id"] for d in docs if d["state"] == "indexed" and d.get("model") == model)
        return allowed, {d["id"] for d in docs if d.get("chunks")} <= allowed

    def _filter(self, model: str, doc_ids: Iterable[int] | None = None) -> str | None:
        """The Milvus filter for searchable passages (of these documents when given);
        None: nothing is searchable."""
        allowed, every = self.searchable_docs(model)
        if doc_ids is not None:
            allowed = allowed & frozenset(doc_ids)
            every = False
        if not allowed:
            return None
        return "id >= 0" if every else f"doc_id in {_in(sorted(allowed))}"

    @staticmethod
    def _current(rows: list[dict], docs: list[dict]) -> list[dict]:
        """The passage rows (with "id", "doc_id") of their documents' current versions."""
        by_id = {d["id"]: d for d in docs}
        return [r for r in rows if current(by_id.get(int(r["doc_id"]), {}), int(r["id"]))]

    def mismatched(self) -> list[tuple[int, str]]:
        out = []
        for d in self.store.documents.all_rows():
            text = self.store.get_long("text", d["id"], d.get("first_passage"))
            for r in self.store.query(self.name, f"doc_id == {d['id']}", ["id", "content", "data"]):
                if not current(d, int(r["id"])):
                    continue
                a, b = r["data"]["char_from"], r["data"]["char_to"]
                if text is None or text[a:b] != r["content"]:
                    out.append((int(r["id"]), from_db(d["path"])))
        return out

    def searchable_count(self, model: str) -> int:
        where = self._filter(model)
        if where is None or not self.store.has_passages():
            return 0
        rows = self.store.client.query(self.name, filter=where, output_fields=["count(*)"])
        return int(rows[0]["count(*)"])

    def searchable_ids(self, model: str, by_document: bool = False) -> list[int]:
        where = self._filter(model)
        if where is None:
            return []
        rows = self._current(self.store.query(self.name, where, ["id", "doc_id", "seq"]), self._documents())
        if by_document:
            paths = {d["id"]: d["path"] for d in self._documents()}
            rows.sort(key=lambda r: (paths.get(r["doc_id"], ""), r["seq"]))
        return [int(r["id"]) for r in rows]

    def searchable_vectors(self, model: str) -> Iterator[tuple[int, bytes]]:
        where = self._filter(model)
        if where is None:
            return
        for r in self._current(self.store.query(self.name, where, ["id", "doc_id", "vector"]), self._documents()):
            yield int(r["id"]), np.asarray(r["vector"], dtype=np.float32).tobytes()

    def vectors(self, ids: list[int]) -> Iterator[tuple[int, bytes]]:
        for start in range(0, len(ids), 2000):
            for r in self.store.query(self.name, f"id in {_in(ids[start:start + 2000])}", ["id", "vector"]):
                yield int(r["id"]), np.asarray(r["vector"], dtype=np.float32).tobytes()

    def rows(self, ids: list[int], model: str) -> dict[int, ChunkRow]:
        if not ids:
            return {}
        allowed, _ = self.searchable_docs(model)
        found = []
        for start in range(0, len(ids), 2000):
            found += self.store.query(self.name, f"id in {_in(ids[start:start + 2000])}", _ROW_OUT)
        doc_ids = sorted({int(r["doc_id"]) for r in found} & allowed)
        docs = {d["id"]: d for d in self.store.documents._rows(f"id in {_in(doc_ids)}")} if doc_ids else {}
        out: dict[int, ChunkRow] = {}
        for r in found:
            d = docs.get(int(r["doc_id"]))
            if d is None or not current(d, int(r["id"])):
                continue
            data = dict(r["data"])
            crc = data.pop("crc", None)
            if crc is not None and crc != quote_crc(r["content"]):
                log.error("passage %d does not match its document's text: not quoted", r["id"])
                continue
            data.pop("tokens", None)
            sent = base64.b64decode(r["sentences"]) if r.get("sentences") else None
            out[int(r["id"])] = ChunkRow(
                id=int(r["id"]), doc_id=int(r["doc_id"]), path=from_db(d["path"]),
                name=from_db(d.get("name") or ""), title=d.get("title"), kind=d.get("kind"),
                content=r["content"], text=r["text"],
                vector=np.asarray(r["vector"], dtype=np.float32).tobytes(),
                sentence_vectors=sent, **data,
            )  # fmt: skip
        return out

    def scoped_docs(self, scope: Scope | None) -> list[int] | None:
        """The documents in the scope (None: no scope)."""
        if scope is None or scope.everything:
            return None
        out = []
        folder = to_db(scope.folder.rstrip("/") or "/") if scope.folder is not None else None
        inside = (folder if folder.endswith("/") else folder + "/") if folder else None
        for d in self._documents():
            if folder is not None and not (d["path"] == folder or d["path"].startswith(inside)):
                continue
            if scope.kinds and d.get("kind") not in scope.kinds:
                continue
            if scope.since is not None and (d.get("mtime") or 0) < scope.since:
                continue
            out.append(d["id"])
        return out

    def fts(self, expression: str, limit: int, scope: Scope | None = None) -> list[tuple[int, float]]:
        """BM25 through Milvus's function, for the FTS5 expression search/bm25.py builds:
        an OR of quoted terms, or one quoted phrase (its words side by side, checked on the
        candidates BM25 returns)."""
        if not self.store.has_passages():
            return []
        quoted = _QUOTED.findall(expression)
        phrase = len(quoted) == 1 and " OR " not in expression and len(quoted[0].split()) > 1
        words = [w for q in quoted for w in stemmed(q)]
        if not words:
            return []
        # The model does not matter to BM25, but what is searchable does: the documents of
        # any model that are indexed (the caller's rows() keeps the current model's).
        allowed = {d["id"] for d in self._documents() if d["state"] == "indexed"}
        scoped = self.scoped_docs(scope)
        if scoped is not None:
            allowed &= set(scoped)
        if not allowed:
            return []
        where = f"doc_id in {_in(sorted(allowed))}"
        hits = self.store.client.search(
            self.name, data=[" ".join(dict.fromkeys(words))], anns_field="sparse",
            limit=min(limit * (4 if phrase else 1), 16384), filter=where,
            output_fields=["terms"] if phrase else ["id"],
            search_params={"metric_type": "BM25"},
        )[0]  # fmt: skip
        out = []
        needle = f" {' '.join(words)} "
        for h in hits:
            if phrase and needle not in f" {h['entity']['terms']} ":
                continue
            out.append((int(h["id"]), abs(float(h["distance"]))))
        return out[:limit]

    def scoped_ids(self, model: str, scope: Scope) -> set[int]:
        docs = self.scoped_docs(scope)
        where = self._filter(model, docs)
        if where is None:
            return set()
        return {int(r["id"]) for r in self.store.query(self.name, where, ["id"])}

    def passages_with(self, term: str, cap: int) -> int:
        """As the local store counts them; remembered until the next commit (a text match
        costs 0.1-0.3 s on Milvus Lite, and every search and the calibration weigh the
        question's words: measured in docs/EVALUATION.md, "A team library on Milvus")."""
        gen = self.store.generation()
        if self._held[0] != gen or len(self._held[1]) > HELD_CACHE:
            self._held = (gen, {})
        known = self._held[1].get((term, cap))
        if known is not None:
            return known
        words = stemmed(term)
        if not words or not self.store.has_passages():
            return 0
        rows = self.store.client.query(self.name, filter=f"TEXT_MATCH(terms, {json.dumps(' '.join(words))})",
                                       output_fields=["id"], limit=cap)  # fmt: skip
        self._held[1][(term, cap)] = len(rows)
        return len(rows)

    def _all(self, field: str) -> list:
        """`field` of every passage of the documents' current versions, in id order."""
        rows = self._current(self.store.query(self.name, "id >= 0", ["id", "doc_id", field]),
                             self.store.documents.all_rows())  # fmt: skip
        return [r[field] for r in sorted(rows, key=lambda r: r["id"])]

    def all_contents(self) -> list[str]:
        return self._all("content")

    def all_texts(self) -> list[str]:
        return self._all("text")

    def all_vectors(self) -> bytes:
        return b"".join(np.asarray(v, dtype=np.float32).tobytes() for v in self._all("vector"))


class MilvusVectors:
    """Dense search in Milvus's HNSW index, over the searchable passages."""

    def __init__(self, backend: Callable[[], Store], model: str) -> None:
        self._backend, self.model = backend, model
        self.generation = -1

    def __len__(self) -> int:
        return self._backend().chunks.searchable_count(self.model)

    def query(self, vector: np.ndarray, k: int, within: set[int] | None = None) -> list[tuple[int, float]]:
        store = self._backend()
        passages = store.chunks
        where = passages._filter(self.model)
        if where is None or k <= 0 or not store.has_passages():
            return []
        if within is not None:
            if not within:
                return []
            where = f"({where}) and id in {_in(sorted(within))}"
        hits = store.client.search(
            store.passages_name, data=[np.asarray(vector, dtype=np.float32).tolist()],
            anns_field="vector", limit=min(k, 16384), filter=where, output_fields=["id"],
            search_params={"metric_type": "COSINE", "params": {"ef": max(128, k * 2)}},
        )[0]  # fmt: skip
        return [(int(h["id"]), float(h["distance"])) for h in hits]


class MilvusFollower:
    """The dense search needs no cache here: Milvus holds the index and follows its own
    writes. The interface of kbapp.store.cache.VectorCache, kept."""

    def __init__(self, backend: Callable[[], Store], model: str) -> None:
        self._backend = backend
        self._vectors = MilvusVectors(backend, model)

    def get(self) -> MilvusVectors:
        return self._vectors

    def forget(self) -> None:
        pass

    def save(self) -> None:
        """At the end of an index run: seal what was written, so it is searched through its
        HNSW and inverted indexes (measured on Milvus Lite at 10k passages: dense p50
        678 -> 71 ms, BM25 1,559 -> 104 ms)."""
        store = self._backend()
        if store.has_passages():
            store.client.flush(store.passages_name)

    def changed(self, removed: list[int], gen: int | None, added: list[int] | None = None,
                vectors: np.ndarray | None = None) -> None:  # fmt: skip
        if gen is not None:
            self._vectors.generation = gen


