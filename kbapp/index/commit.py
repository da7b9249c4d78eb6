"""Commit: how one document enters, leaves or is emptied in the library, each in one
transaction under the writer lock, the vector cache told of exactly what changed.

`commit` swaps a document's new text, pages, passages, vectors and FTS rows in for its old
ones; `clear` leaves a document that yields nothing searchable now (`failed`,
`unsupported`, `skipped`) with its reason; `delete` removes it. These are the only three
ways an indexing run, a removed folder or a vanished file change a document's rows.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..chunk import Chunked, identifier_parts
from ..extract import Extracted
from ..words import fold

if TYPE_CHECKING:
    from .target import Target

RETRY_AFTER_S = 300.0  # a passing failure (OCR under load, a time limit) is retried then
MAX_TRIES = 5
EMPTY_WARNING = "the document holds no text to search"


@dataclass
class Prepared:
    """A document read and chunked, waiting for its vectors."""

    doc_id: int
    path: Path
    content_hash: str
    size: int
    mtime: float
    extracted: Extracted
    chunked: Chunked


def commit(lib: Target, p: Prepared, vectors: np.ndarray, sentences: list[bytes | None]) -> int:
    """Swap the document's new version in; returns how many passages it has now."""
    ex, ch = p.extracted, p.chunked
    extractor, pipeline, model = lib.stamp
    pages = [
        {"number": pg.number, "char_from": pg.char_from, "char_to": pg.char_to,
         "ocr": int(pg.ocr), "ocr_confidence": pg.ocr_confidence, "needs_ocr": int(pg.needs_ocr),
         "boxes": json.dumps(pg.boxes) if pg.boxes else None}
        for pg in ex.pages
    ]  # fmt: skip
    chunks = ch.chunks
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
        lib.cache.changed(old, gen, ids, vectors)
    return len(ids)


def clear(lib: Target, doc_id: int, state: str, reason: str | None, retry: bool = False) -> None:
    """A document that yields nothing searchable now: `failed`, `unsupported` or `skipped`
    with its reason. `retry`: the cause may pass; it is read again later by itself (a few
    times), and the reason says so."""
    docs = lib.store.documents
    with lib.writer():
        extra = retry_columns(retry, docs.tries(doc_id))
        if retry and extra["retry_after"] is None:
            reason = f"{reason} (gave up after {extra['tries']} tries; Retry reads it again)"
        old, gen = docs.clear(doc_id, state, reason, extra)
        if old:
            lib.cache.changed(old, gen)


def delete(lib: Target, doc_id: int) -> None:
    with lib.writer():
        old, gen = lib.store.documents.delete(doc_id)
        lib.cache.changed(old, gen)


def empty_reason(ex: Extracted) -> str:
    """Why a document gave no text, with what extraction reported on the way."""
    if ex.warnings:
        return "no text to index: " + "; ".join(ex.warnings)
    return "no text to index (the document is empty after extraction)"


def retry_columns(retry: bool, tries: int) -> dict[str, float | int | None]:
    """When a document is read again by itself: after a passing failure, a few times."""
    if retry and tries + 1 < MAX_TRIES:
        return {"retry_after": time.time() + RETRY_AFTER_S, "tries": tries + 1}
    return {"retry_after": None, "tries": tries + 1 if retry else 0}
