"""The indexing job: scan -> extract -> chunk -> embed -> store, one document at a time.

A document's chunks, vectors and FTS rows appear in one transaction or not at all; its
chunk count is written when it finishes. One failing document is recorded as `failed`
with its reason and never stops the rest. Cancel leaves unfinished documents `queued`.
Qt-free: the GUI wraps this in a QThread job, the CLI calls it directly.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .chunk import Chunked, chunk_document
from .errors import ExtractionError, KbError, UnsupportedFormat
from .extract import EXTRACTOR_VERSION, Extracted, extract, is_supported

if TYPE_CHECKING:
    from .library import Library

log = logging.getLogger(__name__)

PIPELINE_BASE = "1"
FLUSH_CHUNKS = 1024  # embed this many at once across documents: fewer, better-sorted batches
SAVE_EVERY_S = 30.0
_IGNORED_SUFFIXES = (".tmp", ".part", ".crdownload", ".swp", ".lock", "~")


def is_ignored(name: str) -> bool:
    """Hidden files, editor and download temporaries: never documents."""
    return name.startswith((".", "~$")) or name.endswith(_IGNORED_SUFFIXES)


def walk_files(root: Path, skip: Path | None = None) -> Iterator[Path]:
    """Every file under root, hidden ones and symlinked folders left out (no loops), and
    `skip` (the library's own folder, when it lies inside a watched one) left out too."""
    if root.is_file():
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        if skip is not None and Path(dirpath) == skip:
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if not is_ignored(d))
        for name in sorted(filenames):
            if not is_ignored(name):
                yield Path(dirpath) / name


def file_hash(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class Progress:
    total: int = 0
    done: int = 0
    indexed: int = 0
    failed: int = 0
    unsupported: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks: int = 0
    current: str = ""
    started: float = field(default_factory=time.monotonic)
    cancelled: bool = False

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def rate(self) -> float:
        """Documents per second so far."""
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        if self.done == 0 or self.rate == 0:
            return None
        return (self.total - self.done) / self.rate


ProgressFn = Callable[[Progress], None]


@dataclass
class _Prepared:
    doc_id: int
    path: Path
    content_hash: str
    size: int
    mtime: float
    extracted: Extracted
    chunked: Chunked


class IndexJob:
    def __init__(
        self, library: Library, paths: list[Path] | None = None,
        progress: ProgressFn | None = None, cancel: threading.Event | None = None,
        only_ids: list[int] | None = None,
    ) -> None:  # fmt: skip
        self.lib = library
        self.paths = paths
        self.on_progress = progress or (lambda p: None)
        self.cancel = cancel or threading.Event()
        self.only_ids = only_ids
        self.progress = Progress()
        self._last_save = time.monotonic()

    # -- scanning -------------------------------------------------------------------------
    def _plan(self) -> list[int]:
        """Record what is on disk; return the ids of documents to (re)index."""
        lib = self.lib
        store = lib.store
        if self.only_ids is not None:
            return list(self.only_ids)
        roots = self.paths if self.paths is not None else lib.folder_paths()
        queue: list[int] = []
        for root in roots:
            if not root.exists():
                log.warning("folder %s is missing; its documents are kept", root)
                continue
            folder_id = lib.folder_id(root)
            seen: set[str] = set()
            for path in walk_files(root, skip=lib.root):
                key = str(path)
                seen.add(key)
                doc_id = self._note_file(path, folder_id)
                if doc_id is not None:
                    queue.append(doc_id)
            if root.is_dir():
                prefix = str(root).rstrip(os.sep) + os.sep
                gone = [
                    (did, p)
                    for did, p in store.conn.execute(
                        "SELECT id, path FROM documents WHERE path LIKE ? ESCAPE '\\'",
                        (_like_prefix(prefix),),
                    )
                    if p not in seen
                ]
                for did, _ in gone:
                    lib.delete_document(did)
                    self.progress.removed += 1
        queue += [
            r[0]
            for r in store.conn.execute("SELECT id FROM documents WHERE state='queued'")
            if r[0] not in queue
        ]
        return queue

    def _note_file(self, path: Path, folder_id: int | None) -> int | None:
        store = self.lib.store
        try:
            st = path.stat()
        except OSError as exc:
            log.warning("cannot stat %s: %s", path, exc)
            return None
        row = store.conn.execute(
            "SELECT id, size, mtime, state, extractor_version, pipeline_version, model "
            "FROM documents WHERE path=?",
            (str(path),),
        ).fetchone()
        now = time.time()
        if not is_supported(path):
            reason = f"kbapp cannot read {path.suffix or 'extension-less'} files"
            with store.atomic():
                if row is None:
                    store.conn.execute(
                        "INSERT INTO documents(path, folder_id, name, kind, size, mtime, state, "
                        "reason, updated_at) VALUES(?,?,?,?,?,?, 'unsupported', ?, ?)",
                        (
                            str(path),
                            folder_id,
                            path.name,
                            path.suffix.lower().lstrip("."),
                            st.st_size,
                            st.st_mtime,
                            reason,
                            now,
                        ),  # fmt: skip
                    )
            self.progress.unsupported += 1 if row is None else 0
            return None
        if row is None:
            with store.atomic():
                cur = store.conn.execute(
                    "INSERT INTO documents(path, folder_id, name, size, mtime, state, updated_at) "
                    "VALUES(?,?,?,?,?, 'queued', ?)",
                    (str(path), folder_id, path.name, st.st_size, st.st_mtime, now),
                )
            return int(cur.lastrowid)
        doc_id, size, mtime, state, ev, pv, model = row
        current = (ev, pv, model) == (EXTRACTOR_VERSION, self.lib.pipeline_version, self.lib.model)
        unchanged_file = size == st.st_size and mtime == st.st_mtime
        if unchanged_file and state in ("indexed", "failed") and (current or state == "failed"):
            self.progress.unchanged += 1
            return None
        if state != "queued":
            with store.atomic():
                store.conn.execute(
                    "UPDATE documents SET state='queued', updated_at=? WHERE id=?", (now, doc_id)
                )
        return doc_id

    # -- running --------------------------------------------------------------------------
    def run(self) -> Progress:
        lib = self.lib
        with lib.writer():
            lib.reset_interrupted()
            queue = self._plan()
            self.progress.total = len(queue)
            self.on_progress(self.progress)
            pending: list[_Prepared] = []
            for doc_id in queue:
                if self.cancel.is_set():
                    self.progress.cancelled = True
                    break
                prepared = self._prepare(doc_id)
                if prepared is not None:
                    pending.append(prepared)
                if sum(len(p.chunked.chunks) for p in pending) >= FLUSH_CHUNKS:
                    self._flush(pending)
                    pending = []
            self._flush(pending)
            lib.save_vectors()
        self.on_progress(self.progress)
        return self.progress

    def _prepare(self, doc_id: int) -> _Prepared | None:
        lib = self.lib
        store = lib.store
        row = store.conn.execute("SELECT path FROM documents WHERE id=?", (doc_id,)).fetchone()
        if row is None:
            return None
        path = Path(row[0])
        self.progress.current = path.name
        self.on_progress(self.progress)
        with store.atomic():
            store.conn.execute(
                "UPDATE documents SET state='indexing', updated_at=? WHERE id=?",
                (time.time(), doc_id),
            )
        if not path.exists() and not path.is_symlink():
            lib.delete_document(doc_id)  # deleted while waiting in the queue: gone, not failed
            self.progress.removed += 1
            self._finished("removed", 0)
            return None
        try:
            st = path.stat()
            digest = file_hash(path)
            same = store.conn.execute(
                "SELECT 1 FROM documents WHERE id=? AND content_hash=? AND extractor_version=? "
                "AND pipeline_version=? AND model=? AND chunks IS NOT NULL",
                (doc_id, digest, EXTRACTOR_VERSION, lib.pipeline_version, lib.model),
            ).fetchone()
            if same:  # touched but not changed: keep the chunks we have
                with store.atomic():
                    store.conn.execute(
                        "UPDATE documents SET state='indexed', size=?, mtime=?, updated_at=? "
                        "WHERE id=?",
                        (st.st_size, st.st_mtime, time.time(), doc_id),
                    )
                self._finished("indexed", 0)
                return None
            extracted = extract(
                path, lib.settings.ocr_language, lib.settings.ocr_timeout_s,
                lib.settings.extract_time_limit_s, int(lib.settings.max_text_mb * 2**20),
            )  # fmt: skip
            encoder = lib.encoder
            chunked = chunk_document(
                extracted, lib.settings.chunk, encoder.count_tokens, encoder.window
            )
            if not chunked.chunks:
                raise ExtractionError("no text to index (the document is empty after extraction)")
        except UnsupportedFormat as exc:
            self._fail(doc_id, "unsupported", str(exc))
            return None
        except KbError as exc:
            self._fail(doc_id, "failed", str(exc))
            return None
        except OSError as exc:
            self._fail(doc_id, "failed", f"cannot read the file: {exc.strerror or exc}")
            return None
        except Exception as exc:  # noqa: BLE001 - a bug on one file must not stop the folder
            log.exception("unexpected error indexing %s", path)
            self._fail(doc_id, "failed", f"unexpected error: {type(exc).__name__}: {exc}")
            return None
        return _Prepared(doc_id, path, digest, st.st_size, st.st_mtime, extracted, chunked)

    def _fail(self, doc_id: int, state: str, reason: str) -> None:
        self.lib.clear_document(doc_id, state=state, reason=reason)
        self._finished(state, 0)

    def _finished(self, state: str, chunks: int) -> None:
        p = self.progress
        p.done += 1
        p.chunks += chunks
        if state == "indexed":
            p.indexed += 1
        elif state == "failed":
            p.failed += 1
        elif state == "unsupported":
            p.unsupported += 1
        self.on_progress(p)

    def _flush(self, pending: list[_Prepared]) -> None:
        if not pending:
            return
        lib = self.lib
        texts = [c.text for p in pending for c in p.chunked.chunks]
        try:
            vectors = lib.encoder.encode(texts, batch_size=lib.settings.batch_size)
        except Exception as exc:  # noqa: BLE001
            log.exception("embedding failed")
            for p in pending:
                self._fail(p.doc_id, "failed", f"embedding failed: {exc}")
            return
        at = 0
        for p in pending:
            if self.cancel.is_set():  # cancel takes effect between documents, even here
                self.progress.cancelled = True
                with lib.store.atomic() as conn:
                    conn.execute("UPDATE documents SET state='queued' WHERE id=?", (p.doc_id,))
                continue
            n = len(p.chunked.chunks)
            self._commit(p, vectors[at : at + n])
            at += n
        if time.monotonic() - self._last_save > SAVE_EVERY_S:
            lib.save_vectors()
            self._last_save = time.monotonic()

    def _commit(self, p: _Prepared, vectors: np.ndarray) -> None:
        lib = self.lib
        store = lib.store
        ex, ch = p.extracted, p.chunked
        now = time.time()
        with store.atomic() as conn:
            old = lib.remove_content(p.doc_id)
            conn.execute("INSERT INTO texts(doc_id, text) VALUES(?, ?)", (p.doc_id, ex.text))
            conn.executemany(
                "INSERT INTO pages(doc_id, number, char_from, char_to, ocr, ocr_confidence, "
                "needs_ocr, boxes) VALUES(?,?,?,?,?,?,?,?)",
                [
                    (
                        p.doc_id,
                        pg.number,
                        pg.char_from,
                        pg.char_to,
                        int(pg.ocr),
                        pg.ocr_confidence,
                        int(pg.needs_ocr),
                        json.dumps(pg.boxes) if pg.boxes else None,
                    )  # fmt: skip
                    for pg in ex.pages
                ],
            )
            ids = []
            for c, vec in zip(ch.chunks, vectors, strict=True):
                cur = conn.execute(
                    "INSERT INTO chunks(doc_id, seq, section, char_from, char_to, page_from, "
                    "page_to, content, text, tokens, vector) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        p.doc_id,
                        c.seq,
                        c.section,
                        c.char_from,
                        c.char_to,
                        c.page_from,
                        c.page_to,
                        c.content,
                        c.text,
                        c.tokens,
                        vec.astype(np.float32).tobytes(),
                    ),  # fmt: skip
                )
                ids.append(int(cur.lastrowid))
            conn.executemany(
                "INSERT INTO chunks_fts(rowid, text) VALUES(?, ?)",
                [(i, c.text) for i, c in zip(ids, ch.chunks, strict=True)],
            )
            conn.execute(
                "UPDATE documents SET state='indexed', reason=NULL, warnings=?, title=?, kind=?, "
                "size=?, mtime=?, content_hash=?, extractor_version=?, pipeline_version=?, "
                "model=?, dims=?, pages=?, ocr_pages=?, ocr_confidence=?, needs_ocr_pages=?, "
                "chunks=?, split_for_window=?, header_tokens=?, total_tokens=?, indexed_at=?, "
                "updated_at=? WHERE id=?",
                (
                    json.dumps(ex.warnings) if ex.warnings else None,
                    ex.title,
                    ex.kind,
                    p.size,
                    p.mtime,
                    p.content_hash,
                    EXTRACTOR_VERSION,
                    lib.pipeline_version,
                    lib.model,
                    lib.encoder.dims,
                    len(ex.pages) or None,
                    ex.ocr_pages,
                    ex.ocr_confidence,
                    sum(1 for pg in ex.pages if pg.needs_ocr),
                    len(ids),
                    ch.split_for_window,
                    ch.header_tokens,
                    ch.total_tokens,
                    now,
                    now,
                    p.doc_id,
                ),
            )
            gen = store.bump_generation()
        lib.vectors.remove(old)
        lib.vectors.add(ids, vectors)
        lib.vectors.generation = gen
        self._finished("indexed", len(ids))


def _like_prefix(prefix: str) -> str:
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
