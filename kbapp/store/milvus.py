"""A team library on Milvus: the whole library (documents, canonical texts, pages, passages
with their dense and sentence vectors, BM25, folders, settings and the calibration) in
Milvus collections, behind the same boundary as the local store (kbapp.store.backend).

`milvus://HOST:PORT/NAME` is a Milvus server (NAME prefixes the collections);
`milvus:///PATH/FILE.db` is a Milvus Lite file (for tests and trials: one process at a time
opens it). Credentials come from KBAPP_MILVUS_TOKEN, or KBAPP_MILVUS_USER with
KBAPP_MILVUS_PASSWORD, or the system keyring (service "kbapp", user = the address); they are
never written anywhere.

BM25 is Milvus's own function (a sparse field computed from text). The text it is given is
the passage's words as the local index cuts and stems them (Unicode words, diacritics
removed, Porter's stemmer: the same rules as SQLite's `porter unicode61` tokenizer), so a
Milvus server and Milvus Lite (whose analyzer does not stem) rank the same words alike.

Milvus has no transactions. A commit writes the document's new passages first and deletes
its old ones after, then bumps the generation; a reader between the two steps may see both
versions of that one document for a moment. One writer at a time: a lease row in the store
(owner, expiry), not a file lock, so two machines indexing one library are kept apart.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import re
import socket
import threading
import time
import unicodedata
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import LibraryBusy, LibraryError
from ..paths import from_db, to_db
from .chunks import ChunkRow, quote_crc
from .documents import CHUNK_COLUMNS, PAGE_COLUMNS, STATUS_COLUMNS, DocumentRow, Known

if TYPE_CHECKING:
    from ..config import Scope
    from .backend import Backend

log = logging.getLogger(__name__)

SCHEME = "milvus://"
PIECE = 16_000  # characters of a long value per row (a VARCHAR holds 65,535 bytes)
VARCHAR_MAX = 65_535
MAX_ROWS = 16_384  # rows one query may return
WINDOW = 10_000  # ids read per query
LEASE_S = 600.0  # a writer that vanished frees the library after this long
PLACEHOLDER = [0.0, 1.0]  # Milvus wants a vector field in every collection

_DOC_FIELDS = ("name", "title", "kind", "size", "mtime", "content_hash", "reason", "warnings",
               "extractor_version", "pipeline_version", "model", "dims", "pages", "ocr_pages",
               "ocr_confidence", "needs_ocr_pages", "chunks", "split_for_window",
               "header_tokens", "total_tokens", "indexed_at", "updated_at", "retry_after",
               "tries")  # fmt: skip
_PASSAGE_DATA = tuple(c for c in CHUNK_COLUMNS if c not in ("seq", "content", "text")) + ("crc",)


def parse_address(address: str) -> tuple[str, str, bool]:
    """(client uri, collection prefix, is Milvus Lite) of a milvus:// address."""
    if not address.startswith(SCHEME):
        raise LibraryError(f"{address} is not a Milvus address (milvus://HOST:PORT/NAME)")
    rest = address[len(SCHEME):]
    if rest.startswith("/"):  # milvus:///path/file.db
        return rest, "kbapp", True
    host, _, name = rest.partition("/")
    name = re.sub(r"\W", "_", name.strip("/")) or "kbapp"
    if not host:
        raise LibraryError(f"{address}: say which server, milvus://HOST:PORT/NAME")
    return f"http://{host}", name, False


def credentials(address: str) -> str:
    """The token the client sends: from the environment, else the system keyring."""
    token = os.environ.get("KBAPP_MILVUS_TOKEN")
    if token:
        return token
    user = os.environ.get("KBAPP_MILVUS_USER")
    password = os.environ.get("KBAPP_MILVUS_PASSWORD")
    if user and password:
        return f"{user}:{password}"
    with contextlib.suppress(Exception):  # no keyring installed, or none configured
        import keyring  # type: ignore[import-not-found]

        secret = keyring.get_password("kbapp", address)
        if secret:
            return secret
    return ""


# -- words as BM25 sees them -------------------------------------------------------------
_WORD = re.compile(r"[^\W_]+")
_stemmer = None
_stem_lock = threading.Lock()


def _stem(words: list[str]) -> list[str]:
    global _stemmer
    with _stem_lock:
        if _stemmer is None:
            import snowballstemmer

            _stemmer = snowballstemmer.stemmer("porter")
        return _stemmer.stemWords(words)


def _plain(text: str) -> str:
    """Lower case without diacritics, as unicode61 remove_diacritics 2 reads it."""
    text = text.lower()
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def stemmed(text: str) -> list[str]:
    return _stem(_WORD.findall(_plain(text)))


def bm25_text(text: str) -> str:
    """What Milvus's BM25 function reads of a passage: its stemmed words, in order."""
    out = " ".join(stemmed(text))
    return out.encode("utf-8")[: VARCHAR_MAX - 1].decode("utf-8", "ignore")


_QUOTED = re.compile(r'"([^"]*)"')


# -- the connection ------------------------------------------------------------------------
_CLIENTS: dict[str, Any] = {}
_CLIENTS_LOCK = threading.Lock()


def _client(address: str) -> Any:
    """One client per address in this process (Milvus Lite lets one process open a file)."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(address)
        if client is not None:
            return client
        try:
            from pymilvus import MilvusClient
            # pymilvus logs every failed call before raising it; kbapp says what failed
            logging.getLogger("pymilvus").setLevel(logging.CRITICAL)
        except ImportError as exc:
            raise LibraryError(
                "a team library on Milvus needs kbapp's `team` extra: "
                "pip install 'kbapp[team]' (pymilvus, milvus-lite)"
            ) from exc
        uri, _, lite = parse_address(address)
        try:
            if lite:
                # Milvus Lite's in-process server logs a traceback for each call it does not
                # implement (a timestamp pymilvus asks for while an index is built)
                logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
                os.makedirs(os.path.dirname(uri) or ".", exist_ok=True)
                client = MilvusClient(uri)
            else:
                client = MilvusClient(uri=uri, token=credentials(address), timeout=10)
        except Exception as exc:  # noqa: BLE001 - pymilvus raises many kinds
            text = str(exc)
            if re.search(r"auth|password|credential|denied|unauthenticated", text, re.I):
                why = "the server refused the user name or password (KBAPP_MILVUS_USER, KBAPP_MILVUS_PASSWORD or KBAPP_MILVUS_TOKEN)"
            elif lite:
                why = f"the Milvus Lite file could not be opened ({text}); another kbapp may have it open"
            else:
                why = f"the server could not be reached ({text})"
            raise LibraryError(f"cannot open the team library at {address}: {why}") from exc
        _CLIENTS[address] = client
        return client


def forget_client(address: str) -> None:
    """Close this process's client for an address (tests reopen a Lite file)."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.pop(address, None)
    if client is not None:
        with contextlib.suppress(Exception):
            client.close()


class MilvusStore:
    """One library's collections; thread-safe (one gRPC channel), shared by every thread."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.uri, self.prefix, self.lite = parse_address(address)
        self.client = _client(address)
        self.docs_name = f"{self.prefix}_documents"
        self.blobs_name = f"{self.prefix}_records"
        self.passages_name = f"{self.prefix}_passages"
        self._lock = threading.RLock()
        self._ensure_small()
        self.documents = MilvusDocuments(self)
        self.folders = MilvusFolders(self)
        self.chunks = MilvusPassages(self)

    # -- collections ----------------------------------------------------------------------
    def _create(self, name: str, schema: Any, indexes: list[tuple[str, str, str]]) -> None:
        params = self.client.prepare_index_params()
        for field, kind, metric in indexes:
            extra = {"M": 16, "efConstruction": 200} if kind == "HNSW" else {}
            params.add_index(field, index_type=kind, metric_type=metric, params=extra)
        self.client.create_collection(name, schema=schema, index_params=params,
                                      consistency_level="Strong")  # fmt: skip

    def _ensure_small(self) -> None:
        from pymilvus import DataType

        c = self.client
        if not c.has_collection(self.docs_name):
            s = c.create_schema(auto_id=False)
            s.add_field("id", DataType.INT64, is_primary=True)
            s.add_field("path", DataType.VARCHAR, max_length=VARCHAR_MAX)
            s.add_field("folder_id", DataType.INT64)
            s.add_field("state", DataType.VARCHAR, max_length=32)
            s.add_field("model", DataType.VARCHAR, max_length=512)
            s.add_field("data", DataType.JSON)
            s.add_field("v", DataType.FLOAT_VECTOR, dim=2)
            self._create(self.docs_name, s, [("v", "FLAT", "L2")])
        if not c.has_collection(self.blobs_name):
            s = c.create_schema(auto_id=False)
            s.add_field("key", DataType.VARCHAR, is_primary=True, max_length=1024)
            s.add_field("doc_id", DataType.INT64)
            s.add_field("value", DataType.VARCHAR, max_length=VARCHAR_MAX)
            s.add_field("v", DataType.FLOAT_VECTOR, dim=2)
            self._create(self.blobs_name, s, [("v", "FLAT", "L2")])
        for name in (self.docs_name, self.blobs_name):
            c.load_collection(name)
        if c.has_collection(self.passages_name):
            c.load_collection(self.passages_name)

    def dims(self) -> int | None:
        """The dense field's width, once passages were written."""
        if not self.client.has_collection(self.passages_name):
            return None
        for f in self.client.describe_collection(self.passages_name)["fields"]:
            if f["name"] == "vector":
                return int(f["params"]["dim"])
        return None

    def check_model(self, model: str, dims: int) -> None:
        """A team library's passages were embedded by one model for everyone: a desktop with
        another model is refused (never re-embeds the team's library behind its back)."""
        made_by = self.get_meta("passages_model")
        have = self.dims()
        if (made_by is not None and made_by != model) or (have is not None and have != dims):
            raise LibraryError(
                f"the team library at {self.address} holds {have}-dimensional vectors made by "
                f"the model {made_by}; this kbapp uses {model} ({dims} dimensions): open it "
                f"with --model {made_by}, or give the other model its own library name"
            )

    def ensure_passages(self, dims: int, model: str) -> None:
        if self.dims() is not None:
            self.check_model(model, dims)
            return
        from pymilvus import DataType, Function, FunctionType

        c = self.client
        s = c.create_schema(auto_id=False)
        s.add_field("id", DataType.INT64, is_primary=True)
        s.add_field("doc_id", DataType.INT64)
        s.add_field("seq", DataType.INT64)
        s.add_field("content", DataType.VARCHAR, max_length=VARCHAR_MAX)
        s.add_field("text", DataType.VARCHAR, max_length=VARCHAR_MAX)
        s.add_field("terms", DataType.VARCHAR, max_length=VARCHAR_MAX, enable_analyzer=True,
                    enable_match=True, analyzer_params={"tokenizer": "standard"})  # fmt: skip
        s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        s.add_field("vector", DataType.FLOAT_VECTOR, dim=dims)
        s.add_field("sentences", DataType.VARCHAR, max_length=VARCHAR_MAX, nullable=True)
        s.add_field("data", DataType.JSON)
        s.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                input_field_names=["terms"], output_field_names=["sparse"]))  # fmt: skip
        self._create(self.passages_name, s, [("vector", "HNSW", "COSINE"),
                                             ("sparse", "SPARSE_INVERTED_INDEX", "BM25")])  # fmt: skip
        c.load_collection(self.passages_name)
        self.set_meta("passages_model", model)

    def has_passages(self) -> bool:
        return self.client.has_collection(self.passages_name)

    # -- reading helpers ------------------------------------------------------------------
    def query(self, name: str, filter: str, fields: list[str], limit: int | None = None) -> list[dict]:
        """Every row matching. Milvus answers at most 16,384 rows a call (and Milvus Lite has
        no query iterator): documents and passages, whose ids are counted up from 1, are
        read in id windows of fewer rows than that."""
        if name == self.passages_name and not self.has_passages():
            return []
        if limit is not None or name == self.blobs_name:
            return list(self.client.query(name, filter=filter, output_fields=fields,
                                          limit=limit or MAX_ROWS))  # fmt: skip
        counter = "passage" if name == self.passages_name else "document"
        top = int(self.get_meta(f"next_{counter}", "1") or 1)
        out: list[dict] = []
        for start in range(0, top, WINDOW):
            where = f"({filter}) and id >= {start} and id < {start + WINDOW}"
            out += self.client.query(name, filter=where, output_fields=fields, limit=MAX_ROWS)
        return out

    # -- records: meta, folders, long values ---------------------------------------------
    def put(self, key: str, value: str, doc_id: int = -1) -> None:
        self.client.upsert(self.blobs_name, [{"key": key, "doc_id": doc_id, "value": value,
                                              "v": PLACEHOLDER}])  # fmt: skip

    def get(self, key: str) -> str | None:
        rows = self.client.query(self.blobs_name, filter=f"key == {json.dumps(key)}",
                                 output_fields=["value"], limit=1)  # fmt: skip
        return rows[0]["value"] if rows else None

    def put_long(self, kind: str, doc_id: int, value: str) -> None:
        rows = [{"key": f"{kind}:{doc_id}:{i:06d}", "doc_id": doc_id, "value": value[s : s + PIECE],
                 "v": PLACEHOLDER} for i, s in enumerate(range(0, max(len(value), 1), PIECE))]  # fmt: skip
        for start in range(0, len(rows), 256):
            self.client.insert(self.blobs_name, rows[start : start + 256])

    def get_long(self, kind: str, doc_id: int) -> str | None:
        rows = self.query(self.blobs_name, f'doc_id == {doc_id} and key like "{kind}:{doc_id}:%"',
                          ["key", "value"])  # fmt: skip
        if not rows:
            return None
        return "".join(r["value"] for r in sorted(rows, key=lambda r: r["key"]))

    def drop_long(self, doc_id: int) -> None:
        self.client.delete(self.blobs_name, filter=f"doc_id == {doc_id}")

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        value = self.get(f"meta:{key}")
        return default if value is None else value

    def set_meta(self, key: str, value: str) -> None:
        self.put(f"meta:{key}", value)

    def next_id(self, counter: str, n: int = 1) -> int:
        """The first of n new ids (callers hold the writer lease)."""
        with self._lock:
            first = int(self.get_meta(f"next_{counter}", "1") or 1)
            self.set_meta(f"next_{counter}", str(first + n))
            return first

    def bump_generation(self) -> int:
        with self._lock:
            gen = self.generation() + 1
            self.set_meta("generation", str(gen))
            return gen

    def generation(self) -> int:
        return int(self.get_meta("generation", "0") or 0)

    def integrity(self) -> list[str]:
        try:
            self.client.query(self.docs_name, filter="id >= 0", output_fields=["id"], limit=1)
        except Exception as exc:  # noqa: BLE001
            return [f"the documents collection cannot be read: {exc}"]
        return []

    def close(self) -> None:
        """The client stays open for the process's other threads and libraries."""

    def drop_all(self) -> None:
        for name in (self.docs_name, self.blobs_name, self.passages_name):
            if self.client.has_collection(name):
                self.client.drop_collection(name)


def _in(ids: Iterable[int]) -> str:
    return "[" + ",".join(str(int(i)) for i in ids) + "]"


class MilvusDocuments:
    def __init__(self, store: MilvusStore) -> None:
        self.store = store
        self.name = store.docs_name

    # -- rows -----------------------------------------------------------------------------
    def _rows(self, filter: str) -> list[dict]:
        rows = self.store.query(self.name, filter, ["id", "path", "folder_id", "state", "model", "data"])
        out = []
        for r in rows:
            d = dict(r["data"] or {})
            d.update(id=int(r["id"]), path=r["path"], folder_id=int(r["folder_id"]),
                     state=r["state"], model=r["model"] or None)  # fmt: skip
            out.append(d)
        return out

    def _one(self, filter: str) -> dict | None:
        rows = self._rows(filter)
        return rows[0] if rows else None

    def _by_id(self, doc_id: int) -> dict | None:
        return self._one(f"id == {int(doc_id)}")

    def _by_path(self, path: str) -> dict | None:
        return self._one(f"path == {json.dumps(to_db(path))}")

    def _write(self, rows: list[dict]) -> None:
        if not rows:
            return
        out = []
        for d in rows:
            data = {k: d.get(k) for k in _DOC_FIELDS}
            out.append({"id": d["id"], "path": d["path"], "folder_id": d.get("folder_id") or -1,
                        "state": d["state"], "model": d.get("model") or "", "data": data,
                        "v": PLACEHOLDER})  # fmt: skip
        self.store.client.upsert(self.name, out)

    def all_rows(self) -> list[dict]:
        return self._rows("id >= 0")

    # -- reading --------------------------------------------------------------------------
    def known(self, path: str) -> Known | None:
        d = self._by_path(path)
        if d is None:
            return None
        stamp = (d.get("extractor_version"), d.get("pipeline_version"), d.get("model"))
        return Known(d["id"], d.get("size"), d.get("mtime"), d["state"], stamp, d.get("retry_after"))

    def tries(self, doc_id: int) -> int:
        d = self._by_id(doc_id)
        return int(d.get("tries") or 0) if d else 0

    def id_of(self, path: str) -> int | None:
        d = self._by_path(path)
        return d["id"] if d else None

    def path_of(self, doc_id: int) -> str | None:
        d = self._by_id(doc_id)
        return from_db(d["path"]) if d else None

    def ids_in_state(self, state: str) -> list[int]:
        return [d["id"] for d in self._rows(f"state == {json.dumps(state)}")]

    def ids_in_folder(self, folder_id: int) -> list[int]:
        return [d["id"] for d in self._rows(f"folder_id == {int(folder_id)}")]

    def under(self, folder: str) -> list[tuple[int, str]]:
        prefix = to_db(folder.rstrip("/") + "/")
        return [(d["id"], from_db(d["path"])) for d in self.all_rows()
                if d["path"].startswith(prefix)]  # fmt: skip

    def unchanged(self, doc_id: int, digest: str, stamp: tuple[str, str, str]) -> bool:
        d = self._by_id(doc_id)
        return bool(d and d.get("content_hash") == digest and d.get("chunks") is not None
                    and (d.get("extractor_version"), d.get("pipeline_version"), d.get("model")) == stamp)  # fmt: skip

    def state_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for d in self.all_rows():
            counts[d["state"]] = counts.get(d["state"], 0) + 1
        return counts

    def indexed_with_other_model(self, model: str) -> int:
        return sum(1 for d in self._rows('state == "indexed"') if d.get("model") != model)

    def status_rows(self) -> list[DocumentRow]:
        out = []
        for d in sorted(self.all_rows(), key=lambda d: d["path"]):
            row = {k: d.get(k) for k in STATUS_COLUMNS}
            row["path"], row["name"] = from_db(d["path"]), from_db(d.get("name") or "")
            row["warnings"] = json.loads(d["warnings"]) if d.get("warnings") else []
            out.append(DocumentRow(**row))
        return out

    def text(self, doc_id: int) -> str | None:
        return self.store.get_long("text", doc_id)

    def _pages(self, doc_id: int) -> list[dict]:
        raw = self.store.get_long("pages", doc_id)
        return json.loads(raw) if raw else []

    def pages(self, doc_id: int) -> list[tuple[int, int, int]]:
        return [(p["number"], p["char_from"], p["char_to"])
                for p in sorted(self._pages(doc_id), key=lambda p: p["number"])]  # fmt: skip

    def located(self, doc_id: int) -> list[tuple[str | None, int, int]]:
        rows = self.store.query(self.store.passages_name, f"doc_id == {int(doc_id)}", ["data"])
        return sorted(((r["data"].get("locator"), r["data"]["char_from"], r["data"]["char_to"])
                       for r in rows), key=lambda t: t[1])  # fmt: skip

    def page_boxes(self, doc_id: int, page: int) -> list[tuple] | None:
        for p in self._pages(doc_id):
            if p["number"] == page and p.get("boxes"):
                return [tuple(b) for b in json.loads(p["boxes"])]
        return None

    def totals(self) -> tuple[int, int, int, int, int]:
        rows = self._rows('state == "indexed"')
        total = [len(rows), 0, 0, 0, 0]
        for d in rows:
            for i, k in enumerate(("chunks", "split_for_window", "header_tokens", "total_tokens"), 1):
                total[i] += int(d.get(k) or 0)
        return tuple(total)  # type: ignore[return-value]

    # -- writing (callers hold the writer lease) -----------------------------------------
    def add(self, path: str, folder_id: int | None, name: str, size: int, mtime: float,
            state: str = "queued", kind: str | None = None, reason: str | None = None) -> int:  # fmt: skip
        doc_id = self.store.next_id("document")
        self._write([{"id": doc_id, "path": to_db(path), "folder_id": folder_id,
                      "name": to_db(name), "kind": kind, "size": size, "mtime": mtime,
                      "state": state, "reason": reason, "updated_at": time.time(), "tries": 0}])  # fmt: skip
        return doc_id

    def _update(self, rows: list[dict], **columns: Any) -> None:
        for d in rows:
            d.update(columns)
        self._write(rows)

    def set_state(self, doc_ids: Iterable[int], state: str, **columns: Any) -> None:
        ids = list(doc_ids)
        if ids:
            self._update(self._rows(f"id in {_in(ids)}"), state=state, updated_at=time.time(), **columns)

    def start_reading(self, doc_id: int) -> None:
        d = self._by_id(doc_id)
        if d and d["state"] == "queued":
            self._update([d], state="indexing")

    def move_state(self, old: str, new: str) -> int:
        rows = self._rows(f"state == {json.dumps(old)}")
        self._update(rows, state=new)
        return len(rows)

    def mark_stale(self, stamp: tuple[str, str, str]) -> int:
        rows = [d for d in self._rows('state == "indexed"')
                if (d.get("extractor_version"), d.get("pipeline_version"), d.get("model")) != tuple(stamp)]  # fmt: skip
        self._update(rows, state="stale")
        if rows:
            self.store.bump_generation()  # what is searchable changed
        return len(rows)

    def _remove_content(self, doc_id: int, keep: list[int] | None = None) -> list[int]:
        old = [int(r["id"]) for r in self.store.query(self.store.passages_name,
                                                       f"doc_id == {int(doc_id)}", ["id"])]  # fmt: skip
        kept = set(keep or ())
        gone = [i for i in old if i not in kept]
        for start in range(0, len(gone), 2000):
            self.store.client.delete(self.store.passages_name, filter=f"id in {_in(gone[start:start + 2000])}")
        return gone

    def clear(self, doc_id: int, state: str, reason: str | None,
              extra: dict[str, Any] | None = None) -> tuple[list[int], int | None]:  # fmt: skip
        old = self._remove_content(doc_id)
        self.store.drop_long(doc_id)
        d = self._by_id(doc_id)
        if d is not None:
            self._update([d], state=state, reason=reason, chunks=None, indexed_at=None,
                         content_hash=None, updated_at=time.time(), **(extra or {}))  # fmt: skip
        gen = self.store.bump_generation() if old else None
        return old, gen

    def delete(self, doc_id: int) -> tuple[list[int], int]:
        old = self._remove_content(doc_id)
        self.store.drop_long(doc_id)
        self.store.client.delete(self.name, filter=f"id == {int(doc_id)}")
        return old, self.store.bump_generation()

    def commit(self, doc_id: int, text: str, pages: list[dict], chunks: list[Any],
               vectors: list[bytes], fts: list[str], columns: dict[str, Any],
               sentences: list[bytes | None],
               ) -> tuple[list[int], list[int], int]:  # fmt: skip
        """The document's new version: passages first, then the old ones removed, then the
        document row (state 'indexed') and the generation."""
        store = self.store
        if vectors:
            store.ensure_passages(len(vectors[0]) // 4, columns.get("model") or "")
        first = store.next_id("passage", len(chunks)) if chunks else 0
        ids = list(range(first, first + len(chunks)))
        rows = []
        for cid, c, vec, sent, terms in zip(ids, chunks, vectors, sentences, fts, strict=True):
            data = {k: getattr(c, k) for k in _PASSAGE_DATA if k != "crc"}
            data["crc"] = quote_crc(c.content)
            encoded = base64.b64encode(sent).decode("ascii") if sent else None
            if encoded is not None and len(encoded) >= VARCHAR_MAX:
                log.info("passage %d has too many sentences to keep their vectors", cid)
                encoded = None
            rows.append({"id": cid, "doc_id": doc_id, "seq": c.seq, "content": c.content,
                         "text": c.text, "terms": bm25_text(terms),
                         "vector": np.frombuffer(vec, dtype=np.float32).tolist(),
                         "sentences": encoded, "data": data})  # fmt: skip
        for start in range(0, len(rows), 512):
            store.client.insert(store.passages_name, rows[start : start + 512])
        old = self._remove_content(doc_id, keep=ids)
        store.drop_long(doc_id)
        store.put_long("text", doc_id, text)
        store.put_long("pages", doc_id, json.dumps([{k: p[k] for k in PAGE_COLUMNS} for p in pages]))
        d = self._by_id(doc_id) or {"id": doc_id}
        self._update([d], state="indexed", reason=None, updated_at=time.time(), **columns)
        return old, ids, store.bump_generation()


class MilvusFolders:
    def __init__(self, store: MilvusStore) -> None:
        self.store = store

    def _all(self) -> list[dict]:
        rows = self.store.query(self.store.blobs_name, 'key like "folder:%"', ["value"])
        return sorted((json.loads(r["value"]) for r in rows), key=lambda f: f["id"])

    def _find(self, path: str) -> dict | None:
        key = to_db(path)
        return next((f for f in self._all() if f["path"] == key), None)

    def _put(self, f: dict) -> None:
        self.store.put(f"folder:{f['id']:09d}", json.dumps(f))

    def ensure(self, path: str) -> int:
        found = self._find(path)
        if found is not None:
            return int(found["id"])
        f = {"id": self.store.next_id("folder"), "path": to_db(path), "paused": False,
             "added_at": time.time()}  # fmt: skip
        self._put(f)
        return int(f["id"])

    def id_of(self, path: str) -> int | None:
        found = self._find(path)
        return int(found["id"]) if found else None

    def remove(self, folder_id: int) -> None:
        self.store.client.delete(self.store.blobs_name, filter=f'key == "folder:{int(folder_id):09d}"')

    def set_paused(self, path: str, paused: bool) -> bool:
        found = self._find(path)
        if found is None:
            return False
        found["paused"] = bool(paused)
        self._put(found)
        return True

    def all(self) -> list[tuple[str, bool]]:
        return [(from_db(f["path"]), bool(f["paused"])) for f in self._all()]


_ROW_OUT = ["id", "doc_id", "content", "text", "vector", "sentences", "data"]


class MilvusPassages:
    def __init__(self, store: MilvusStore) -> None:
        self.store = store
        self._searchable: tuple[int, str, frozenset[int] | None] | None = None

    @property
    def name(self) -> str:
        return self.store.passages_name

    def searchable_docs(self, model: str) -> tuple[frozenset[int], bool]:
        """(ids of the documents whose passages are searchable, whether those are all the
        documents that hold passages), read again at each new generation."""
        gen = self.store.generation()
        cached = self._searchable
        if cached is None or cached[0] != gen or cached[1] != model:
            docs = self.store.documents.all_rows()
            allowed = frozenset(d["id"] for d in docs if d["state"] == "indexed" and d.get("model") == model)
            holding = {d["id"] for d in docs if d.get("chunks")}
            self._searchable = cached = (gen, model, allowed if not holding <= allowed else None)
            self._all_docs = allowed
        every = cached[2] is None
        return self._all_docs, every

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

    def mismatched(self) -> list[tuple[int, str]]:
        out = []
        for d in self.store.documents.all_rows():
            text = self.store.get_long("text", d["id"])
            for r in self.store.query(self.name, f"doc_id == {d['id']}", ["id", "content", "data"]):
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
        rows = self.store.query(self.name, where, ["id", "doc_id", "seq"])
        if by_document:
            paths = {d["id"]: d["path"] for d in self.store.documents.all_rows()}
            rows.sort(key=lambda r: (paths.get(r["doc_id"], ""), r["seq"]))
        return [int(r["id"]) for r in rows]

    def searchable_vectors(self, model: str) -> Iterator[tuple[int, bytes]]:
        where = self._filter(model)
        if where is None:
            return
        for r in self.store.query(self.name, where, ["id", "vector"]):
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
            if d is None:
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
        for d in self.store.documents.all_rows():
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
        allowed = {d["id"] for d in self.store.documents._rows('state == "indexed"')}
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
        words = stemmed(term)
        if not words or not self.store.has_passages():
            return 0
        rows = self.store.client.query(self.name, filter=f"TEXT_MATCH(terms, {json.dumps(' '.join(words))})",
                                       output_fields=["id"], limit=cap)  # fmt: skip
        return len(rows)

    def _all(self, field: str) -> list:
        rows = self.store.query(self.name, "id >= 0", ["id", field])
        return [r[field] for r in sorted(rows, key=lambda r: r["id"])]

    def all_contents(self) -> list[str]:
        return self._all("content")

    def all_texts(self) -> list[str]:
        return self._all("text")

    def all_vectors(self) -> bytes:
        return b"".join(np.asarray(v, dtype=np.float32).tobytes() for v in self._all("vector"))


class MilvusVectors:
    """Dense search in Milvus's HNSW index, over the searchable passages."""

    def __init__(self, backend: Callable[[], MilvusStore], model: str) -> None:
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

    def __init__(self, backend: Callable[[], MilvusStore], model: str) -> None:
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


class Lease:
    """The single writer of a team library: a row (owner, expiry) in the store, renewed
    while held. Re-entrant for the thread holding it; LibraryBusy for anyone else."""

    def __init__(self, store: Callable[[], MilvusStore], address: str) -> None:
        self._store, self.address = store, address
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.lock = threading.RLock()
        self._depth = 0
        self._renewer: threading.Thread | None = None
        self._stop = threading.Event()

    def _read(self) -> dict | None:
        raw = self._store().get_meta("lease")
        return json.loads(raw) if raw else None

    def _take(self) -> bool:
        held = self._read()
        if held and held["owner"] != self.owner and held["until"] > time.time():
            return False
        self._store().set_meta("lease", json.dumps({"owner": self.owner, "until": time.time() + LEASE_S}))
        held = self._read()  # two takers at once: the last write wins, the other backs off
        return bool(held and held["owner"] == self.owner)

    def _renew(self) -> None:
        while not self._stop.wait(LEASE_S / 3):
            with contextlib.suppress(Exception):
                self._store().set_meta("lease", json.dumps({"owner": self.owner, "until": time.time() + LEASE_S}))

    @contextlib.contextmanager
    def hold(self, wait: bool = False) -> Iterator[None]:
        if not self.lock.acquire(blocking=wait):
            raise LibraryBusy(f"the library at {self.address} is being written by this kbapp "
                              "(indexing); try again when it has finished")  # fmt: skip
        try:
            if self._depth == 0:
                while not self._take():
                    if not wait:
                        who = (self._read() or {}).get("owner", "another kbapp")
                        raise LibraryBusy(f"the team library at {self.address} is being indexed by "
                                          f"{who}; try again when it has finished")  # fmt: skip
                    time.sleep(1.0)
                self._stop.clear()
                self._renewer = threading.Thread(target=self._renew, daemon=True, name="kbapp-lease")
                self._renewer.start()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._stop.set()
                    with contextlib.suppress(Exception):
                        held = self._read()
                        if held and held["owner"] == self.owner:
                            self._store().client.delete(self._store().blobs_name, filter='key == "meta:lease"')
        finally:
            self.lock.release()


class MilvusStorage:
    kind = "milvus"

    def __init__(self, address: str) -> None:
        self.address = address
        parse_address(address)
        self._store: MilvusStore | None = None
        self._guard = threading.Lock()
        self._lease = Lease(self.connect, address)

    def describe(self) -> str:
        return self.address

    def exists(self) -> bool:
        """Asked before a search: a mistyped name must not leave empty collections."""
        _, prefix, _ = parse_address(self.address)
        if not _client(self.address).has_collection(f"{prefix}_documents"):
            return False
        store = self.connect()
        return store.get_meta("model") is not None or bool(store.folders.all())

    def connect(self) -> MilvusStore:
        with self._guard:
            if self._store is None:
                self._store = MilvusStore(self.address)
            return self._store

    def writer(self) -> Callable[[bool], AbstractContextManager[None]]:
        return self._lease.hold

    def vectors(self, model: str, backend: Callable[[], Backend], dims: Callable[[], int],
                writer: Callable[..., AbstractContextManager[None]]) -> MilvusFollower:  # fmt: skip
        return MilvusFollower(self.connect, model)

    def set_aside(self) -> None:
        """`rebuild`: a team library's collections are dropped and made again (Milvus keeps
        no copy aside; the folders are kept by the caller)."""
        self.connect().drop_all()
        with self._guard:
            self._store = None

