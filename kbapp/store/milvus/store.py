"""One team library's collections: documents, records (meta, folders, long values) and
passages, and the reads and writes every repository uses."""

from __future__ import annotations

import json
import threading
from typing import Any

from ...errors import LibraryError
from .connection import MAX_ROWS, PIECE, PLACEHOLDER, VARCHAR_MAX, WINDOW, _client, parse_address
from .documents import MilvusDocuments, MilvusFolders
from .passages import MilvusPassages


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

    @staticmethod
    def _long_key(kind: str, doc_id: int, version: int | None) -> str:
        """The key prefix of a document's long value (text, pages) of one version; None: the
        unversioned keys of a library written before versions were kept."""
        return f"{kind}:{doc_id}:" if version is None else f"{kind}:{doc_id}@{version}:"

    def put_long(self, kind: str, doc_id: int, value: str, version: int | None = None) -> None:
        key = self._long_key(kind, doc_id, version)
        rows = [{"key": f"{key}{i:06d}", "doc_id": doc_id, "value": value[s : s + PIECE],
                 "v": PLACEHOLDER} for i, s in enumerate(range(0, max(len(value), 1), PIECE))]  # fmt: skip
        for start in range(0, len(rows), 256):
            self.client.insert(self.blobs_name, rows[start : start + 256])

    def get_long(self, kind: str, doc_id: int, version: int | None = None) -> str | None:
        key = self._long_key(kind, doc_id, version)
        rows = self.query(self.blobs_name, f'doc_id == {doc_id} and key like "{key}%"', ["key", "value"])
        if not rows:
            return None
        return "".join(r["value"] for r in sorted(rows, key=lambda r: r["key"]))

    def drop_long(self, doc_id: int, keep: int | None = None) -> None:
        """Every long value of the document, or every one but version `keep`'s."""
        if keep is None:
            self.client.delete(self.blobs_name, filter=f"doc_id == {doc_id}")
            return
        kept = (self._long_key("text", doc_id, keep), self._long_key("pages", doc_id, keep))
        gone = [r["key"] for r in self.query(self.blobs_name, f"doc_id == {doc_id}", ["key"])
                if not r["key"].startswith(kept)]  # fmt: skip
        for start in range(0, len(gone), 1000):
            self.client.delete(self.blobs_name, filter=f"key in {json.dumps(gone[start:start + 1000])}")

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


