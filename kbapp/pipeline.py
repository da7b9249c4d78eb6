"""The indexing job: scan -> extract -> chunk -> embed -> store, one document at a time.

A document's chunks, vectors and FTS rows appear in one transaction or not at all; its
chunk count is written when it finishes. One failing document is recorded as `failed`
with its reason and never stops the rest. Cancel leaves unfinished documents `queued`.
Qt-free: the GUI wraps this in a QThread job, the CLI calls it directly.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from .chunk import Chunked, chunk_document, identifier_parts, sentence_texts
from .errors import ExtractionError, KbError, UnsupportedFormat
from .extract import Extracted, is_supported, unsupported_reason
from .extract.workers import Done, ExtractPool, PageDone, Task, default_workers
from .fold import fold
from .paths import display_path, file_sha256

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from .config import Settings
    from .embed import Encoder
    from .store import Store


class Target(Protocol):
    """What an indexing run needs of the library it writes (kbapp.library.Library)."""

    root: Path
    settings: Settings

    @property
    def store(self) -> Store: ...
    @property
    def encoder(self) -> Encoder: ...
    @property
    def stamp(self) -> tuple[str, str, str]: ...
    def writer(self, wait: bool = False) -> AbstractContextManager[None]: ...
    def folder_paths(self) -> list[Path]: ...
    def folder_id(self, path: Path) -> int | None: ...
    def delete_document(self, doc_id: int) -> None: ...
    def clear_document(self, doc_id: int, state: str, reason: str | None,
                       retry: bool = False) -> None: ...  # fmt: skip
    def vectors_changed(self, removed: list[int], gen: int | None,
                        added: list[int] | None = None, vectors: np.ndarray | None = None,
                        ) -> None: ...  # fmt: skip
    def save_vectors(self) -> None: ...

log = logging.getLogger(__name__)

# Bump when chunking or what is indexed changes (2: thin passages merged, folded text;
# 3: a title repeated as the first heading is said once in the passage header; 4: the
# vectors of each passage's sentences; 5: a heading with nothing under it is a passage).
PIPELINE_BASE = "5"
FLUSH_CHUNKS = 1024  # embed this many at once across documents: fewer, better-sorted batches
REPORT_EVERY_S = 1.0  # progress is reported at least this often while workers read
FLUSH_AFTER_S = 5.0  # ...or whatever has waited this long, so documents become searchable
RETRY_AFTER_S = 300.0  # a passing failure (OCR under load, a time limit) is retried then
MAX_TRIES = 5
SAVE_EVERY_S = 30.0
_IGNORED_SUFFIXES = (".tmp", ".part", ".crdownload", ".swp", ".lock", "~")


def is_ignored(name: str) -> bool:
    """Hidden files, editor and download temporaries: never documents."""
    return name.startswith((".", "~$")) or name.endswith(_IGNORED_SUFFIXES)


@dataclass(frozen=True)
class Skipped:
    """Something under a folder that is deliberately not read, with the reason."""

    path: Path
    reason: str


def walk_files(root: Path, skip: Path | None = None,
               skipped: list[Skipped] | None = None) -> Iterator[Path]:  # fmt: skip
    """Every file under root. Hidden ones and symlinked folders are left out (no loops), so
    is `skip` (the library's own folder, when it lies inside a watched one). A symlinked
    file is followed only when its target lies inside root; other links and unreadable
    folders go to `skipped` with the reason, so nothing is left out silently."""
    if root.is_file():
        yield root
        return
    inside = root.resolve()
    record = skipped.append if skipped is not None else (lambda s: None)

    def unreadable(err: OSError) -> None:
        record(Skipped(Path(err.filename), f"cannot read this folder: {err.strerror or err}"))

    for dirpath, dirnames, filenames in os.walk(root, followlinks=False, onerror=unreadable):
        if skip is not None and Path(dirpath) == skip:
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if not is_ignored(d))
        for name in sorted(filenames):
            if is_ignored(name):
                continue
            path = Path(dirpath) / name
            if path.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError):
                    record(Skipped(path, "a link whose target does not exist: not followed"))
                    continue
                if not target.is_relative_to(inside):
                    record(Skipped(path, f"a link to {display_path(str(target))}, outside the "
                                         "folder: not followed"))  # fmt: skip
                    continue
            yield path




@dataclass
class Progress:
    total: int = 0  # documents in this run
    done: int = 0
    indexed: int = 0
    failed: int = 0
    unsupported: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks: int = 0
    current: str = ""  # the document whose pages were read last
    in_progress: int = 0  # documents being read or waiting to be embedded (state `indexing`)
    reading: int = 0  # of those, the ones a worker is reading now (at most one per worker)
    page: int = 0  # its page progress, for paged documents
    pages: int = 0
    work_total: float = 0.0  # bytes of the documents to read
    work_done: float = 0.0  # committed documents, plus half of what workers have read
    started: float = field(default_factory=time.monotonic)
    cancelled: bool = False

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def fraction(self) -> float:
        if self.work_total > 0:
            return min(1.0, self.work_done / self.work_total)
        return self.done / self.total if self.total else 1.0

    @property
    def eta_s(self) -> float | None:
        """Remaining work at the throughput measured so far (bytes read and committed per
        second), so one big document does not make the estimate jump six-fold."""
        f = self.fraction
        if f <= 0.0 or self.elapsed < 2.0 or self.done >= self.total:
            return None
        return self.elapsed * (1.0 - f) / f

    def describe(self) -> str:
        """One line, the same in the CLI and the window."""
        doc = self.current
        if doc and self.pages > 1:
            doc += f", page {self.page} of {self.pages}"
        if doc and self.in_progress > 1:  # the table shows them all as `indexing`
            waiting = self.in_progress - self.reading
            doc = (f"{self.reading} being read"
                   + (f", {waiting} waiting to be read or embedded" if waiting else "")
                   + f"; {doc}")  # fmt: skip
        eta = self.eta_s
        left = f", about {_duration(eta)} left" if eta is not None else ""
        return (f"Indexing {self.done}/{self.total} ({self.fraction:.0%}{left})"
                + (f": {doc}" if doc else ""))  # fmt: skip


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


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
        self._names: dict[int, str] = {}
        self._paths: dict[int, str | None] = {}  # queued documents' paths, read once
        self._reading: dict[int, float] = {}  # in a worker: fraction of its pages read
        self._reported = 0.0
        self._workers = 1
        self._files: dict[int, tuple[Path, str, int, float]] = {}
        self._work_committed = 0.0


    # -- scanning -------------------------------------------------------------------------
    def _plan(self) -> list[int]:
        """Record what is on disk; return the ids of documents to (re)index."""
        lib = self.lib
        docs = lib.store.documents
        if self.only_ids is not None:
            return list(self.only_ids)
        roots = self.paths if self.paths is not None else lib.folder_paths()
        queue: list[int] = []
        for root in roots:
            if not root.exists():
                log.warning("folder %s is missing; its documents are kept", display_path(str(root)))
                continue
            folder_id = lib.folder_id(root)
            seen: set[str] = set()
            skipped: list[Skipped] = []
            for path in walk_files(root, skip=lib.root, skipped=skipped):
                seen.add(str(path))
                doc_id = self._note_file(path, folder_id)
                if doc_id is not None:
                    queue.append(doc_id)
            for item in skipped:
                seen.add(str(item.path))
                self._note_skipped(item, folder_id)
            if root.is_dir():
                for did, p in docs.under(str(root)):
                    if p not in seen:
                        lib.delete_document(did)
                        self.progress.removed += 1
        queued = set(queue)
        queue += [i for i in docs.ids_in_state("queued") if i not in queued]
        return queue

    def _note_skipped(self, item: Skipped, folder_id: int | None) -> None:
        docs = self.lib.store.documents
        known = docs.known(str(item.path))
        if known is None:
            docs.add(str(item.path), folder_id, item.path.name, 0, 0.0, state="skipped",
                     reason=item.reason)  # fmt: skip
        elif known.state != "skipped":
            self.lib.clear_document(known.id, "skipped", item.reason)

    def _note_file(self, path: Path, folder_id: int | None) -> int | None:
        docs = self.lib.store.documents
        try:
            st = path.stat()
        except OSError as exc:
            log.warning("cannot stat %s: %s", display_path(str(path)), exc)
            return None
        known = docs.known(str(path))
        if not is_supported(path):
            if known is None:
                reason = unsupported_reason(path)
                docs.add(str(path), folder_id, path.name, st.st_size, st.st_mtime,
                         state="unsupported", kind=path.suffix.lower().lstrip("."),
                         reason=reason)  # fmt: skip
                self.progress.unsupported += 1
            return None
        if known is None:
            return docs.add(str(path), folder_id, path.name, st.st_size, st.st_mtime)
        current = known.stamp == self.lib.stamp
        unchanged_file = known.size == st.st_size and known.mtime == st.st_mtime
        retry_due = known.retry_after is not None and known.retry_after <= time.time()
        settled = known.state == "failed" or (known.state == "indexed" and current)
        if unchanged_file and settled and not retry_due:
            self.progress.unchanged += 1
            return None
        if known.state not in ("queued", "indexed"):
            docs.set_state([known.id], "queued")
        return known.id

    # -- running --------------------------------------------------------------------------
    def run(self) -> Progress:
        lib = self.lib
        p = self.progress
        with lib.writer():
            lib.store.documents.move_state("indexing", "queued")  # a crash's leftovers
            queue = self._plan()
            p.total = len(queue)
            self._sizes = self._measure(queue)
            p.work_total = float(sum(self._sizes.values()))
            p.started = time.monotonic()  # the ETA measures reading, not the folder scan
            self.on_progress(p)
            workers = self._workers = lib.settings.workers or default_workers()
            with ExtractPool(workers) as pool:
                self._pump(pool, deque(queue))
            lib.save_vectors()
        p.current, p.page, p.pages = "", 0, 0
        self.on_progress(p)
        return p

    def _measure(self, queue: list[int]) -> dict[int, int]:
        """Each queued document's size (the unit of work behind progress and ETA); its
        path is kept for _start, so the database is asked once per document."""
        docs = self.lib.store.documents
        sizes = {}
        for doc_id in queue:
            path = self._paths[doc_id] = docs.path_of(doc_id)
            try:
                sizes[doc_id] = max(1, os.stat(path).st_size) if path else 1
            except OSError:
                sizes[doc_id] = 1
        return sizes

    def _pump(self, pool: ExtractPool, todo: deque[int]) -> None:
        """Keep every worker busy, embed what they return in batches across documents,
        commit each document as soon as its vectors exist."""
        p = self.progress
        pending: list[_Prepared] = []
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
        p.work_done = self._work_committed + 0.5 * reading
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
            lib.delete_document(doc_id)  # deleted while waiting in the queue: gone, not failed
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

    def _extracted(self, done: Done) -> _Prepared | None:
        """A worker's answer, chunked there (or here, for an encoder whose count does not
        pickle), or the reason it failed."""
        doc_id = done.key
        path, digest, size, mtime = self._files.pop(doc_id)
        self._reading[doc_id] = 1.0
        try:
            if done.unexpected is not None:
                log.error("unexpected error indexing %s: %s", display_path(str(path)),
                          done.unexpected)  # fmt: skip
                raise ExtractionError(f"unexpected error: {done.unexpected}")
            if done.error is not None:
                raise done.error
            extracted = done.extracted
            assert extracted is not None
            chunked = done.chunked
            if chunked is None:
                encoder = self.lib.encoder
                chunked = chunk_document(
                    extracted, self.lib.settings.chunk, encoder.count_tokens, encoder.window
                )
            if not chunked.chunks:
                if extracted.retry or extracted.warnings:  # something went wrong on the way
                    raise ExtractionError(_empty_reason(extracted), retry=extracted.retry)
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
        return _Prepared(doc_id, path, digest, size, mtime, extracted, chunked)

    def _fail(self, doc_id: int, state: str, reason: str, retry: bool = False) -> None:
        self._files.pop(doc_id, None)
        self.lib.clear_document(doc_id, state=state, reason=reason, retry=retry)
        self._finished(doc_id, state, 0)

    def _finished(self, doc_id: int, state: str, chunks: int) -> None:
        p = self.progress
        self._reading.pop(doc_id, None)
        self._work_committed += self._sizes.get(doc_id, 1)
        p.done += 1
        p.chunks += chunks
        if state == "indexed":
            p.indexed += 1
        elif state == "failed":
            p.failed += 1
        elif state == "unsupported":
            p.unsupported += 1
        self._report()

    def _flush(self, pending: list[_Prepared]) -> None:
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
        try:
            vectors, of_sentences = (
                lib.encoder.encode(batch, batch_size=lib.settings.batch_size) if batch
                else np.zeros((0, lib.encoder.dims), dtype=np.float32)
                for batch in (texts, flat)
            )
        except Exception as exc:  # noqa: BLE001
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
            self._commit(p, vectors[at : at + n], blobs[at : at + n])
            at += n
        if time.monotonic() - self._last_save > SAVE_EVERY_S:
            lib.save_vectors()
            self._last_save = time.monotonic()

    def _commit(self, p: _Prepared, vectors: np.ndarray, sentences: list[bytes | None]) -> None:
        lib = self.lib
        ex, ch = p.extracted, p.chunked
        extractor, pipeline, model = lib.stamp
        pages = [
            (pg.number, pg.char_from, pg.char_to, int(pg.ocr), pg.ocr_confidence,
             int(pg.needs_ocr), json.dumps(pg.boxes) if pg.boxes else None)
            for pg in ex.pages
        ]  # fmt: skip
        chunks = [
            (c.seq, c.section, c.char_from, c.char_to, c.page_from, c.page_to, c.content, c.text,
             c.tokens, c.locator, c.symbol, c.line_from, c.line_to)
            for c in ch.chunks
        ]  # fmt: skip
        # Code is also found by the words inside its identifiers ("auth callback").
        fts = [
            fold(f"{c.text}\n{identifier_parts(c.content)}" if ex.symbols is not None else c.text)
            for c in ch.chunks
        ]
        blobs = [v.astype(np.float32).tobytes() for v in vectors]
        columns = {
            "warnings": json.dumps(ex.warnings) if ex.warnings else None, "title": ex.title,
            "kind": ex.kind, "size": p.size, "mtime": p.mtime, "content_hash": p.content_hash,
            "extractor_version": extractor, "pipeline_version": pipeline, "model": model,
            "dims": lib.encoder.dims, "pages": len(ex.pages) or None,
            "ocr_pages": ex.ocr_pages, "ocr_confidence": ex.ocr_confidence,
            "needs_ocr_pages": sum(1 for pg in ex.pages if pg.needs_ocr),
            "chunks": len(chunks), "split_for_window": ch.split_for_window,
            "header_tokens": ch.header_tokens, "total_tokens": ch.total_tokens,
            "indexed_at": time.time(), **retry_columns(ex.retry, lib.store.documents.tries(p.doc_id)),
        }  # fmt: skip
        with lib.writer():
            old, ids, gen = lib.store.documents.commit(
                p.doc_id, ex.text, pages, chunks, blobs, fts, columns, sentences
            )
            lib.vectors_changed(old, gen, ids, vectors)
        self._finished(p.doc_id, "indexed", len(ids))


EMPTY_WARNING = "the document holds no text to search"


def _empty_reason(ex: Extracted) -> str:
    """Why a document gave no text, with what extraction reported on the way."""
    if ex.warnings:
        return "no text to index: " + "; ".join(ex.warnings)
    return "no text to index (the document is empty after extraction)"


def retry_columns(retry: bool, tries: int) -> dict[str, float | int | None]:
    """When a document is read again by itself: after a passing failure, a few times."""
    if retry and tries + 1 < MAX_TRIES:
        return {"retry_after": time.time() + RETRY_AFTER_S, "tries": tries + 1}
    return {"retry_after": None, "tries": tries + 1 if retry else 0}
