"""The indexing job: scan -> extract (workers) -> chunk -> embed -> commit, documents in
parallel, embedded in batches across documents, committed one transaction each.

A document's chunks, vectors and FTS rows appear in one transaction or not at all; its
chunk count is written when it finishes. One failing document is recorded as `failed`
with its reason and never stops the rest. Cancel leaves unfinished documents `queued`.
Qt-free: the GUI wraps this in a QThread job, the CLI calls it directly.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from pathlib import Path

import numpy as np

from ..chunk import chunk_document, sentence_texts
from ..errors import ExtractionError, KbError, UnsupportedFormat
from ..extract import IMAGES
from ..extract.pdf import page_shape
from ..paths import display_path, file_sha256
from .commit import EMPTY_WARNING, Prepared, clear, commit, delete, empty_reason
from .progress import (
    CHUNKING,
    COMMITS,
    PAGE_WORK,
    PASSAGES,
    READING,
    SAVES,
    SENTENCES,
    Progress,
    ProgressFn,
)
from .scan import Plan
from .target import Target
from .workers import Done, ExtractPool, PageDone, Task, default_workers

log = logging.getLogger(__name__)

# Bump when chunking or what is indexed changes (2: thin passages merged, folded text;
# 3: a title repeated as the first heading is said once in the passage header; 4: the
# vectors of each passage's sentences; 5: a heading with nothing under it is a passage).
PIPELINE_BASE = "5"
FLUSH_CHUNKS = 1024  # embed this many at once across documents: fewer, better-sorted batches
REPORT_EVERY_S = 1.0  # progress is reported at least this often while workers read
FLUSH_AFTER_S = 5.0  # ...or whatever has waited this long, so documents become searchable
SAVE_EVERY_S = 30.0
# PAGE_WORK (progress.py), a PDF page's share of the work in the bytes that measure any
# other file, is what a page of text holds. A PDF's bytes say little of its text: Django's
# pages typeset with embedded fonts take 59 KB a page, R's reference manual 2.7 KB; by
# bytes, its 2,415 pages weighed 2% of the 10,000-page library and the ETA said 11 minutes
# for 13.
EMBED_SLICE = 1024  # texts embedded between two progress reports


class IndexJob:
    """One indexing run. The document states it writes: `queued` for a file seen for the
    first time, then `indexed`, `failed` or `unsupported`. A document that is already
    indexed stays `indexed` (and searchable, in its old version) while its new version is
    prepared; the commit swaps the two in one transaction."""

    def __init__(
        self, library: Target, paths: list[Path] | None = None,
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
        self._sizes: dict[int, int] = {}
        self._ocr: dict[int, int] = {}  # scanned pages planned for documents not yet read
        self._ocr_read = 0  # pages OCR'd in the documents read so far
        self._names: dict[int, str] = {}
        self._paths: dict[int, str | None] = {}  # queued documents' paths, read once
        self._reading: dict[int, float] = {}  # in a worker: fraction of its pages read
        self._reported = 0.0
        self._workers = 1
        self._cores = default_workers()
        self._files: dict[int, tuple[Path, str, int, float]] = {}
        self._work_committed = 0.0
        # The batch being embedded: its documents' work not yet committed, its texts, and
        # how many of them are embedded (half of a document's work is reading it, half this)
        self._embedding = (0, 0, 0)
    # -- running --------------------------------------------------------------------------
    def run(self) -> Progress:
        lib = self.lib
        p = self.progress
        with lib.writer():
            lib.store.documents.move_state("indexing", "queued")  # a crash's leftovers
            queue = Plan(lib, p, self.paths, self.only_ids).plan()
            p.total = len(queue)
            self._sizes = self._measure(queue)
            p.work_total = float(sum(self._sizes.values()))
            p.started = time.monotonic()  # the ETA measures reading, not the folder scan
            self.on_progress(p)
            workers = self._workers = p.workers = lib.settings.workers or default_workers()
            with ExtractPool(workers) as pool:
                self._pump(pool, deque(queue))
            self._save()
        p.current, p.page, p.pages = "", 0, 0
        self.on_progress(p)
        return p

    def _measure(self, queue: list[int]) -> dict[int, int]:
        """Each queued document's work (the unit behind progress and ETA): a PDF's or an
        image's pages at PAGE_WORK each, any other file its bytes; and the pages of it that
        OCR will read (self._ocr), whose cost on this machine the run learns
        (Progress.scan_weight). Its path is kept for _start, so the database is asked once
        per document."""
        docs = self.lib.store.documents
        sizes = {}
        for doc_id in queue:
            path = self._paths[doc_id] = docs.path_of(doc_id)
            try:
                size = max(1, os.stat(path).st_size) if path else 1
            except OSError:
                size = 1
            suffix = Path(path).suffix.lower() if path else ""
            shape = page_shape(Path(path)) if suffix == ".pdf" or suffix in IMAGES else None
            if shape and shape[0]:
                pages, scanned = shape
                sizes[doc_id] = pages * PAGE_WORK
                if scanned:
                    self._ocr[doc_id] = scanned
            else:
                sizes[doc_id] = size
        self.progress.ocr_total = float(sum(self._ocr.values()))
        return sizes

    def _pump(self, pool: ExtractPool, todo: deque[int]) -> None:
        """Keep every worker busy, embed what they return in batches across documents,
        commit each document as soon as its vectors exist."""
        p = self.progress
        pending: list[Prepared] = []
        waiting_since = 0.0
        while True:
            if self.cancel.is_set():
                pool.cancel()
                p.cancelled = True
                return
            while todo and pool.free > 0:
                task = self._start(todo.popleft())
                if task is not None:
                    pool.submit(task)
            if not pool.busy() and not pending:
                return
            for event in pool.events(timeout=0.2):
                if isinstance(event, PageDone):
                    self._reading[event.key] = event.done / max(1, event.total)
                    p.current = self._names.get(event.key, p.current)
                    p.page, p.pages = event.done, event.total
                    self._report()
                else:
                    prepared = self._extracted(event)
                    if prepared is not None:
                        if not pending:
                            waiting_since = time.monotonic()
                        pending.append(prepared)
            if time.monotonic() - self._reported > REPORT_EVERY_S:
                self._report()  # a long OCR page sends no news: the estimate still moves
            size = sum(len(x.chunked.chunks) for x in pending)
            idle = not pool.busy() and not todo
            if pending and (size >= FLUSH_CHUNKS or idle
                            or time.monotonic() - waiting_since > FLUSH_AFTER_S):  # fmt: skip
                self._flush(pending)
                pending = []

    def _report(self) -> None:
        p = self.progress
        reading = sum(self._sizes.get(k, 1) * f for k, f in self._reading.items())
        work, texts, embedded = self._embedding
        p.work_done = self._work_committed + 0.5 * reading + 0.5 * work * embedded / max(1, texts)
        p.ocr_done = self._ocr_read + sum(self._ocr.get(k, 0) * f for k, f in self._reading.items())
        p.in_progress = len(self._reading)
        # Handed to a worker and its answer not back: each worker reads one at a time and
        # holds the next one ready.
        p.reading = min(len(self._files), self._workers)
        self._reported = time.monotonic()
        self.on_progress(p)

    def _start(self, doc_id: int) -> Task | None:
        """Parent-side checks before a document goes to a worker: gone, or unchanged."""
        lib = self.lib
        docs = lib.store.documents
        stored = self._paths.pop(doc_id, None)
        if stored is None:
            return None
        path = Path(stored)
        self._names[doc_id] = path.name
        if not path.exists() and not path.is_symlink():
            delete(lib, doc_id)  # deleted while waiting in the queue: gone, not failed
            self.progress.removed += 1
            self._finished(doc_id, "removed", 0)
            return None
        try:
            st = path.stat()
            digest = file_sha256(path)
        except OSError as exc:
            self._fail(doc_id, "failed", f"cannot read the file: {exc.strerror or exc}")
            return None
        if docs.unchanged(doc_id, digest, lib.stamp):  # touched, not changed: keep it
            docs.set_state([doc_id], "indexed", size=st.st_size, mtime=st.st_mtime)
            self._finished(doc_id, "indexed", 0)
            return None
        self._files[doc_id] = (path, digest, st.st_size, st.st_mtime)
        self._reading[doc_id] = 0.0
        docs.start_reading(doc_id)
        self.progress.current = path.name
        self._report()
        s = lib.settings
        counter = getattr(lib.encoder, "token_counter", None)  # None: chunked here instead
        return Task(doc_id, stored, s.ocr_language, s.ocr_timeout_s, s.extract_time_limit_s,
                    int(s.max_text_mb * 2**20), s.chunk if counter else None, counter,
                    lib.encoder.window)  # fmt: skip

    def _extracted(self, done: Done) -> Prepared | None:
        """A worker's answer, chunked there (or here, for an encoder whose count does not
        pickle), or the reason it failed."""
        doc_id = done.key
        path, digest, size, mtime = self._files.pop(doc_id)
        self._reading[doc_id] = 1.0
        self._read_scans(done)
        try:
            if done.unexpected is not None:
                log.error("unexpected error indexing %s: %s", display_path(str(path)),
                          done.unexpected)  # fmt: skip
                raise ExtractionError(f"unexpected error: {done.unexpected}")
            if done.error is not None:
                raise done.error
            extracted = done.extracted
            assert extracted is not None
            self.progress.spend(READING, done.extract_s)
            self.progress.spend(CHUNKING, done.chunk_s)
            chunked = done.chunked
            if chunked is None:
                encoder = self.lib.encoder
                t = time.perf_counter()
                chunked = chunk_document(
                    extracted, self.lib.settings.chunk, encoder.count_tokens, encoder.window
                )
                self.progress.spend(CHUNKING, time.perf_counter() - t)
            if not chunked.chunks:
                if extracted.retry or extracted.warnings:  # something went wrong on the way
                    raise ExtractionError(empty_reason(extracted), retry=extracted.retry)
                # Read fine and holds no words (a blank template, a deck of pictures): that
                # is the document, not a failure to retry. Indexed, with nothing to search.
                extracted.warnings.append(EMPTY_WARNING)
        except UnsupportedFormat as exc:
            self._fail(doc_id, "unsupported", str(exc))
            return None
        except ExtractionError as exc:
            self._fail(doc_id, "failed", str(exc), retry=exc.retry)
            return None
        except KbError as exc:
            self._fail(doc_id, "failed", str(exc))
            return None
        except OSError as exc:
            self._fail(doc_id, "failed", f"cannot read the file: {exc.strerror or exc}")
            return None
        except Exception as exc:  # noqa: BLE001 - a bug on one file must not stop the folder
            log.exception("unexpected error chunking %s", display_path(str(path)))
            self._fail(doc_id, "failed", f"unexpected error: {type(exc).__name__}: {exc}")
            return None
        return Prepared(doc_id, path, digest, size, mtime, extracted, chunked)

    def _read_scans(self, done: Done) -> None:
        """What the reading found replaces what planning guessed: the pages really OCR'd,
        and the worker's seconds for them and for the rest, which teach the ETA what OCR
        costs on this machine against text (Progress.scan_weight)."""
        p = self.progress
        planned = self._ocr.pop(done.key, 0)
        ex = done.extracted
        found = sum(1 for page in ex.pages if page.ocr) if ex is not None else planned
        p.ocr_total += found - planned
        self._ocr_read += found
        if ex is not None and found:
            p.ocr_seconds += done.extract_s
            p.ocr_timed += found
        elif ex is not None:
            p.read_s += done.extract_s + done.chunk_s
            p.read_units += self._sizes.get(done.key, 1)

    def _fail(self, doc_id: int, state: str, reason: str, retry: bool = False) -> None:
        self._files.pop(doc_id, None)
        clear(self.lib, doc_id, state, reason, retry)
        self._finished(doc_id, state, 0)

    def _finished(self, doc_id: int, state: str, chunks: int) -> None:
        p = self.progress
        self._reading.pop(doc_id, None)
        self._work_committed += self._sizes.get(doc_id, 1)
        p.ocr_total -= self._ocr.pop(doc_id, 0)  # never read (unchanged, gone): no OCR
        p.done += 1
        p.chunks += chunks
        if state == "indexed":
            p.indexed += 1
        elif state == "failed":
            p.failed += 1
        elif state == "unsupported":
            p.unsupported += 1
        self._report()

    def _flush(self, pending: list[Prepared]) -> None:
        if not pending:
            return
        lib = self.lib
        texts = [c.text for p in pending for c in p.chunked.chunks]
        # Prose passages' sentences (code has none), embedded apart from the passages: int8
        # scales a batch's activations together, and the passages' vectors, which the gate
        # is calibrated on, stay those of passages batched with passages
        sentences = [[] if p.extracted.symbols is not None else sentence_texts(c)
                     for p in pending for c in p.chunked.chunks]  # fmt: skip
        flat = [s for per in sentences for s in per]
        self._embedding = (sum(self._sizes.get(p.doc_id, 1) for p in pending), len(texts) + len(flat), 0)
        try:
            vectors = self._encode(texts, PASSAGES)
            of_sentences = self._encode(flat, SENTENCES)
        except Exception as exc:  # noqa: BLE001
            self._embedding = (0, 0, 0)
            log.exception("embedding failed")
            for p in pending:
                self._fail(p.doc_id, "failed", f"embedding failed: {exc}", retry=True)
            return
        blobs: list[bytes | None] = []
        at = 0
        for per in sentences:
            blobs.append(of_sentences[at : at + len(per)].astype(np.float16).tobytes() if per else None)
            at += len(per)
        at = 0
        for p in pending:
            if self.cancel.is_set():  # cancel takes effect between documents, even here
                self.progress.cancelled = True
                continue  # a new document stays queued; an edited one keeps its old version
            n = len(p.chunked.chunks)
            t = time.perf_counter()
            chunks = commit(lib, p, vectors[at : at + n], blobs[at : at + n])
            self.progress.spend(COMMITS, time.perf_counter() - t)
            work, total, embedded = self._embedding  # committed now: counted there instead
            self._embedding = (max(0, work - self._sizes.get(p.doc_id, 1)), total, embedded)
            self._finished(p.doc_id, "indexed", chunks)
            at += n
        self._embedding = (0, 0, 0)
        if time.monotonic() - self._last_save > SAVE_EVERY_S:
            self._save()

    def _encode(self, texts: list[str], stage: str) -> np.ndarray:
        """The texts' vectors, EMBED_SLICE at a time with the progress reported between
        slices: one long document's passages (a 2,400-page manual: 15,000 of them) took two
        and a half minutes in one call, and the window and the ETA heard nothing."""
        lib = self.lib
        if not texts:
            return np.zeros((0, lib.encoder.dims), dtype=np.float32)
        out = []
        for at in range(0, len(texts), EMBED_SLICE):
            t = time.perf_counter()
            out.append(lib.encoder.encode(texts[at : at + EMBED_SLICE], batch_size=lib.settings.batch_size))
            seconds = time.perf_counter() - t
            p = self.progress
            p.spend(stage, seconds)
            work, total, done = self._embedding
            p.embed_s += seconds * self._cores  # the encoder runs on every core
            p.embed_units += work * len(out[-1]) / max(1, total)
            self._embedding = (work, total, done + len(out[-1]))
            self._report()
        return np.concatenate(out) if len(out) > 1 else out[0]

    def _save(self) -> None:
        t = time.perf_counter()
        self.lib.cache.save()
        self.progress.spend(SAVES, time.perf_counter() - t)
        self._last_save = time.monotonic()
