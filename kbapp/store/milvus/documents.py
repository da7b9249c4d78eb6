"""Documents (states, texts, pages) and folders of a team library."""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from ...paths import from_db, to_db
from ..chunks import quote_crc
from ..documents import PAGE_COLUMNS, STATUS_COLUMNS, DocumentRow, Known
from .connection import (
    _DOC_FIELDS,
    _PASSAGE_DATA,
    PLACEHOLDER,
    VARCHAR_MAX,
    _in,
    bm25_text,
    current,
)

log = logging.getLogger(__name__)

COMMITTING = "meta:committing:"  # + a document id: a commit of it has begun and not ended

# The collections these read and write (kbapp.store.milvus.store.MilvusStore, which makes
# them: named here by role, so the two modules do not import each other).
Store = Any


class MilvusDocuments:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.name = store.docs_name
        self.writes = 0  # this process's writes: what it has read of the rows may be old

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
        self.writes += 1
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

    def _version(self, doc_id: int) -> int | None:
        d = self._by_id(doc_id)
        return d.get("first_passage") if d else None

    def text(self, doc_id: int) -> str | None:
        return self.store.get_long("text", doc_id, self._version(doc_id))

    def _pages(self, doc_id: int) -> list[dict]:
        raw = self.store.get_long("pages", doc_id, self._version(doc_id))
        return json.loads(raw) if raw else []

    def pages(self, doc_id: int) -> list[tuple[int, int, int]]:
        return [(p["number"], p["char_from"], p["char_to"])
                for p in sorted(self._pages(doc_id), key=lambda p: p["number"])]  # fmt: skip

    def located(self, doc_id: int) -> list[tuple[str | None, int, int]]:
        d = self._by_id(doc_id) or {}
        rows = self.store.query(self.store.passages_name, f"doc_id == {int(doc_id)}", ["id", "data"])
        return sorted(((r["data"].get("locator"), r["data"]["char_from"], r["data"]["char_to"])
                       for r in rows if current(d, int(r["id"]))), key=lambda t: t[1])  # fmt: skip

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
            self._update([d], state=state, reason=reason, chunks=None, indexed_at=None, first_passage=None,
                         content_hash=None, updated_at=time.time(), **(extra or {}))  # fmt: skip
        gen = self.store.bump_generation() if old else None
        return old, gen

    def delete(self, doc_id: int) -> tuple[list[int], int]:
        old = self._remove_content(doc_id)
        self.store.drop_long(doc_id)
        self.store.client.delete(self.name, filter=f"id == {int(doc_id)}")
        self.writes += 1
        return old, self.store.bump_generation()

    def commit(self, doc_id: int, text: str, pages: list[dict], chunks: list[Any],
               vectors: list[bytes], fts: list[str], columns: dict[str, Any],
               sentences: list[bytes | None],
               ) -> tuple[list[int], list[int], int]:  # fmt: skip
        """The document's new version beside the old one, then the document row flipped to
        it, then the old version removed (connection.current: readers go by the row, so they
        see the old version or the new one, never both; a writer that stops half-way leaves
        only unreachable rows, which the next writer removes: finish_interrupted)."""
        store = self.store
        if vectors:
            store.ensure_passages(len(vectors[0]) // 4, columns.get("model") or "")
        store.put(f"{COMMITTING}{doc_id}", "1")  # finish_interrupted's note, until the end
        first = store.next_id("passage", max(1, len(chunks)))  # also the version's number
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
        store.put_long("text", doc_id, text, first)
        store.put_long("pages", doc_id, json.dumps([{k: p[k] for k in PAGE_COLUMNS} for p in pages]), first)
        d = self._by_id(doc_id) or {"id": doc_id}
        # the version's passages: `chunks` (in columns) ids from `first`
        self._update([d], state="indexed", reason=None, updated_at=time.time(), first_passage=first, **columns)
        old = self._tidy(d)  # d is the row as just written
        store.client.delete(store.blobs_name, filter=f'key == "{COMMITTING}{doc_id}"')
        return old, ids, store.bump_generation()

    def _tidy(self, d: dict) -> list[int]:
        """Remove what is not the document's current version (passages, text, pages)."""
        first = d.get("first_passage")
        if first is None:  # an unversioned row: nothing tells the versions apart
            return []
        old = self._remove_content(d["id"], keep=list(range(first, first + int(d.get("chunks") or 0))))
        self.store.drop_long(d["id"], keep=first)
        return old

    def finish_interrupted(self) -> int:
        """A writer that stopped in the middle of a commit (killed, power lost) left a
        document's other version unreachable beside the current one: removed by the next
        writer when it takes the lease. Returns how many documents were tidied."""
        notes = self.store.query(self.store.blobs_name, f'key like "{COMMITTING}%"', ["key"])
        for note in notes:
            d = self._by_id(int(note["key"][len(COMMITTING):]))
            if d is not None and self._tidy(d):
                self.store.bump_generation()
            self.store.client.delete(self.store.blobs_name, filter=f"key == {json.dumps(note['key'])}")
        if notes:
            log.warning("tidied %d document(s) a stopped writer had left half-committed", len(notes))
        return len(notes)


class MilvusFolders:
    def __init__(self, store: Store) -> None:
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


