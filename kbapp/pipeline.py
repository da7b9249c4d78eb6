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
from typing import TYPE_CHECKING, Protocol

import numpy as np

from .chunk import Chunked, chunk_document
from .errors import ExtractionError, KbError, UnsupportedFormat
from .extract import Extracted, extract, is_supported
from .paths import display_path

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
    def clear_document(self, doc_id: int, state: str, reason: str | None) -> None: ...
    def vectors_changed(self, removed: list[int], gen: int | None,
                        added: list[int] | None = None, vectors: np.ndarray | None = None,
                        ) -> None: ...  # fmt: skip
    def save_vectors(self) -> None: ...

log = logging.getLogger(__name__)

PIPELINE_BASE = "1"
FLUSH_CHUNKS = 1024  # embed this many at once across documents: fewer, better-sorted batches
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
                reason = f"kbapp cannot read {path.suffix or 'extension-less'} files"
                docs.add(str(path), folder_id, path.name, st.st_size, st.st_mtime,
                         state="unsupported", kind=path.suffix.lower().lstrip("."),
                         reason=reason)  # fmt: skip
                self.progress.unsupported += 1
            return None
        if known is None:
            return docs.add(str(path), folder_id, path.name, st.st_size, st.st_mtime)
        current = known.stamp == self.lib.stamp
        unchanged_file = known.size == st.st_size and known.mtime == st.st_mtime
        if unchanged_file and (known.state == "failed" or (known.state == "indexed" and current)):
            self.progress.unchanged += 1
            return None
        if known.state not in ("queued", "indexed"):
            docs.set_state([known.id], "queued")
        return known.id

    # -- running --------------------------------------------------------------------------
    def run(self) -> Progress:
        lib = self.lib
        with lib.writer():
            lib.store.documents.move_state("indexing", "queued")  # a crash's leftovers
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
        docs = lib.store.documents
        stored = docs.path_of(doc_id)
        if stored is None:
            return None
        path = Path(stored)
        self.progress.current = path.name
        self.on_progress(self.progress)
        if not path.exists() and not path.is_symlink():
            lib.delete_document(doc_id)  # deleted while waiting in the queue: gone, not failed
            self.progress.removed += 1
            self._finished("removed", 0)
            return None
        try:
            st = path.stat()
            digest = file_hash(path)
            if docs.unchanged(doc_id, digest, lib.stamp):  # touched, not changed: keep it
                docs.set_state([doc_id], "indexed", size=st.st_size, mtime=st.st_mtime)
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
                raise ExtractionError(_empty_reason(extracted))
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
            log.exception("unexpected error indexing %s", display_path(str(path)))
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
                continue  # a new document stays queued; an edited one keeps its old version
            n = len(p.chunked.chunks)
            self._commit(p, vectors[at : at + n])
            at += n
        if time.monotonic() - self._last_save > SAVE_EVERY_S:
            lib.save_vectors()
            self._last_save = time.monotonic()

    def _commit(self, p: _Prepared, vectors: np.ndarray) -> None:
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
             c.tokens)
            for c in ch.chunks
        ]  # fmt: skip
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
            "indexed_at": time.time(),
        }  # fmt: skip
        with lib.writer():
            old, ids, gen = lib.store.documents.commit(
                p.doc_id, ex.text, pages, chunks, blobs, [c.text for c in ch.chunks], columns
            )
            lib.vectors_changed(old, gen, ids, vectors)
        self._finished("indexed", len(ids))


def _empty_reason(ex: Extracted) -> str:
    """Why a document gave no text, with what extraction reported on the way."""
    if ex.warnings:
        return "no text to index: " + "; ".join(ex.warnings)
    return "no text to index (the document is empty after extraction)"
