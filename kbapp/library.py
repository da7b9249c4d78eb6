"""Library: the one object the CLI, the GUI and the tests use.

open a folder -> add folders -> index() -> search() / status() / show() / context().
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from .cite import Citation, build_context, cite, parse_citation
from .config import BUNDLED_MODEL, SearchOptions, Settings, load_settings
from .embed import Encoder, load_encoder
from .errors import KbError, LibraryBusy, LibraryError, SearchError
from .extract import EXTRACTOR_VERSION
from .pipeline import PIPELINE_BASE, IndexJob, Progress, ProgressFn
from .search import Searcher, SearchResult
from .store import Store, VectorIndex

log = logging.getLogger(__name__)

LOCK_FILE = "writer.lock"


@dataclass(frozen=True)
class DocumentStatus:
    id: int
    path: str
    name: str
    title: str | None
    kind: str | None
    state: str
    reason: str | None
    warnings: list[str]
    pages: int | None
    ocr_pages: int | None
    ocr_confidence: float | None
    needs_ocr_pages: int | None
    chunks: int | None
    split_for_window: int | None
    indexed_at: float | None
    model: str | None
    pipeline_version: str | None
    extractor_version: str | None


@dataclass(frozen=True)
class LibraryStatus:
    library: str
    model: str
    documents: list[DocumentStatus]

    def count(self, state: str) -> int:
        return sum(1 for d in self.documents if d.state == state)

    @property
    def chunks(self) -> int:
        return sum(d.chunks or 0 for d in self.documents if d.state == "indexed")


_STATUS_COLUMNS = (
    "id, path, name, title, kind, state, reason, warnings, pages, ocr_pages, ocr_confidence, "
    "needs_ocr_pages, chunks, split_for_window, indexed_at, model, pipeline_version, "
    "extractor_version"
)


class Library:
    def __init__(self, settings: Settings, encoder: Encoder | None = None) -> None:
        self.settings = settings
        self.root = settings.library
        self.pipeline_version = f"{PIPELINE_BASE}:{settings.chunk.signature}"
        self._encoder = encoder
        self._local = threading.local()
        self._vectors: VectorIndex | None = None
        self._vlock = threading.RLock()
        self._elock = threading.Lock()
        self._lock_fh = None
        self._writer_depth = 0
        self._wlock = threading.RLock()
        store = self.store
        with store.atomic():
            previous = store.get_meta("model")
            # The library remembers its model: without an explicit choice it keeps the one
            # it was indexed with, so starting without --model never makes everything stale.
            if encoder is not None:
                self.model = encoder.name
            else:
                self.model = settings.model or previous or BUNDLED_MODEL
            store.set_meta("model", self.model)
        if previous and previous != self.model:
            log.info("model changed from %s to %s: documents are stale", previous, self.model)
        self._mark_stale()

    @classmethod
    def open(
        cls, path: str | os.PathLike[str] | None = None, model: str | None = None,
        encoder: Encoder | None = None, **settings_overrides,
    ) -> Library:  # fmt: skip
        """Defaults and KBAPP_* settings, then the given path, model and overrides."""
        settings = load_settings(path)
        if model:
            settings_overrides["model"] = model
        if settings_overrides:
            settings = replace(settings, **settings_overrides)
        return cls(settings, encoder)

    # -- plumbing -------------------------------------------------------------------------
    @property
    def store(self) -> Store:
        """One connection per thread: the GUI searches while the indexer writes."""
        store = getattr(self._local, "store", None)
        if store is None:
            store = Store(self.root)
            self._local.store = store
        return store

    @property
    def encoder(self) -> Encoder:
        with self._elock:
            if self._encoder is None:
                self._encoder = load_encoder(self.model)
            return self._encoder

    @property
    def vectors(self) -> VectorIndex:
        with self._vlock:
            if self._vectors is None:
                self._vectors = self._load_vectors()
            return self._vectors

    def _load_vectors(self) -> VectorIndex:
        store = self.store
        dims = self.encoder.dims
        index = VectorIndex(self.root, self.model, dims)
        where = (
            "FROM chunks c JOIN documents d ON d.id=c.doc_id WHERE d.state='indexed' AND d.model=?"
        )
        gen = store.generation()
        count = store.conn.execute(f"SELECT count(*) {where}", (self.model,)).fetchone()[0]
        if not index.load(gen, count):
            rows = store.conn.execute(f"SELECT c.id, c.vector {where}", (self.model,))
            index.rebuild(rows, count, gen)
            log.info("rebuilt the vector cache from SQLite: %d vectors", count)
            with contextlib.suppress(LibraryBusy, OSError), self.writer(wait=False):
                index.save()
        return index

    def save_vectors(self) -> None:
        if self._vectors is not None:
            self._vectors.save()

    @contextlib.contextmanager
    def writer(self, wait: bool = False) -> Iterator[None]:
        """The single-writer lock, across processes (flock) and threads."""
        with self._wlock:
            if self._writer_depth == 0:
                fh = open(self.root / LOCK_FILE, "a+")  # noqa: SIM115 - held across calls
                os.chmod(fh.name, 0o600)
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
                except BlockingIOError as exc:
                    fh.close()
                    raise LibraryBusy(
                        f"the library at {self.root} is in use by another kbapp process that "
                        "is indexing it; try again when it has finished"
                    ) from exc
                self._lock_fh = fh
            self._writer_depth += 1
            try:
                yield
            finally:
                self._writer_depth -= 1
                if self._writer_depth == 0 and self._lock_fh is not None:
                    fcntl.flock(self._lock_fh, fcntl.LOCK_UN)
                    self._lock_fh.close()
                    self._lock_fh = None

    def close(self) -> None:
        """Close this thread's connection. Another thread's connection is never closed from
        here (SQLite would crash if it is mid-query); it closes when that thread's local
        storage goes away."""
        store = getattr(self._local, "store", None)
        if store is not None:
            store.close()
            self._local.store = None

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- folders and documents ------------------------------------------------------------
    def folder_paths(self) -> list[Path]:
        return [
            Path(r[0])
            for r in self.store.conn.execute("SELECT path FROM folders WHERE paused=0 ORDER BY id")
        ]

    def folder_id(self, path: Path) -> int | None:
        if not path.is_dir():
            return None
        store = self.store
        with store.atomic():
            store.conn.execute(
                "INSERT OR IGNORE INTO folders(path, added_at) VALUES(?, ?)",
                (str(path), time.time()),
            )
        return int(
            store.conn.execute("SELECT id FROM folders WHERE path=?", (str(path),)).fetchone()[0]
        )

    def add_folder(self, path: str | os.PathLike[str]) -> Path:
        p = Path(path).expanduser().resolve()
        if not p.exists():
            raise LibraryError(f"no such folder or file: {p}")
        self.folder_id(p)
        return p

    def remove_folder(self, path: str | os.PathLike[str]) -> int:
        """Forget a folder: its documents leave the index. Returns how many."""
        p = str(Path(path).expanduser().resolve())
        store = self.store
        with self.writer():
            row = store.conn.execute("SELECT id FROM folders WHERE path=?", (p,)).fetchone()
            if row is None:
                raise LibraryError(f"{p} is not a folder of this library")
            ids = [
                r[0] for r in store.conn.execute("SELECT id FROM documents WHERE folder_id=?", row)
            ]
            for doc_id in ids:
                self.delete_document(doc_id)
            with store.atomic():
                store.conn.execute("DELETE FROM folders WHERE id=?", row)
            self.save_vectors()
        return len(ids)

    def set_folder_paused(self, path: str | os.PathLike[str], paused: bool) -> None:
        p = str(Path(path).expanduser().resolve())
        with self.store.atomic() as conn:
            conn.execute("UPDATE folders SET paused=? WHERE path=?", (int(paused), p))

    def folders(self) -> list[tuple[str, bool]]:
        return [
            (r[0], bool(r[1]))
            for r in self.store.conn.execute("SELECT path, paused FROM folders ORDER BY id")
        ]

    def remove_content(self, doc_id: int) -> list[int]:
        """Inside a transaction: drop a document's text, pages, chunks and FTS rows."""
        conn = self.store.conn
        old = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE doc_id=?", (doc_id,))]
        conn.executemany("DELETE FROM chunks_fts WHERE rowid=?", [(i,) for i in old])
        conn.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
        conn.execute("DELETE FROM pages WHERE doc_id=?", (doc_id,))
        conn.execute("DELETE FROM texts WHERE doc_id=?", (doc_id,))
        return old

    def clear_document(self, doc_id: int, state: str, reason: str | None) -> None:
        store = self.store
        with store.atomic() as conn:
            old = self.remove_content(doc_id)
            conn.execute(
                "UPDATE documents SET state=?, reason=?, chunks=NULL, indexed_at=NULL, "
                "content_hash=NULL, updated_at=? WHERE id=?",
                (state, reason, time.time(), doc_id),
            )
            gen = store.bump_generation() if old else None
        if old:
            self._forget_vectors(old, gen)

    def delete_document(self, doc_id: int) -> None:
        store = self.store
        with store.atomic() as conn:
            old = self.remove_content(doc_id)
            conn.execute("DELETE FROM documents WHERE id=?", (doc_id,))
            gen = store.bump_generation()
        self._forget_vectors(old, gen)

    def _forget_vectors(self, ids: list[int], gen: int | None) -> None:
        if self._vectors is not None:
            self._vectors.remove(ids)
            if gen is not None:
                self._vectors.generation = gen

    def reset_interrupted(self) -> None:
        """A document left `indexing` by a crash is queued again."""
        with self.store.atomic() as conn:
            conn.execute("UPDATE documents SET state='queued' WHERE state='indexing'")

    def _mark_stale(self) -> None:
        """Documents indexed with another model or pipeline are stale, never mixed in."""
        with self.store.atomic() as conn:
            conn.execute(
                "UPDATE documents SET state='stale' WHERE state='indexed' AND "
                "(model IS NOT ? OR pipeline_version IS NOT ? OR extractor_version IS NOT ?)",
                (self.model, self.pipeline_version, EXTRACTOR_VERSION),
            )

    # -- the verbs ------------------------------------------------------------------------
    def index(
        self, paths: list[str | os.PathLike[str]] | None = None, progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> Progress:  # fmt: skip
        """Index the given folders/files (registering folders), or every watched folder."""
        roots = [self.add_folder(p) for p in paths] if paths else None
        with self.store.atomic() as conn:  # stale documents are re-embedded by this run
            conn.execute("UPDATE documents SET state='queued' WHERE state='stale'")
        return IndexJob(self, roots, progress, cancel).run()

    def retry(self, path: str | os.PathLike[str] | None = None,
              progress: ProgressFn | None = None) -> Progress:  # fmt: skip
        """Index failed documents again (all, or the one at path)."""
        conn = self.store.conn
        if path is None:
            ids = [r[0] for r in conn.execute("SELECT id FROM documents WHERE state='failed'")]
        else:
            p = str(Path(path).expanduser().resolve())
            row = conn.execute("SELECT id FROM documents WHERE path=?", (p,)).fetchone()
            if row is None:
                raise LibraryError(f"{p} is not in this library")
            ids = [row[0]]
        return IndexJob(self, progress=progress, only_ids=ids).run()

    def search(self, query: str, options: SearchOptions | None = None, **overrides) -> SearchResult:
        opts = (options or self.settings.search).with_overrides(**overrides)
        if len(self.vectors) == 0:
            self._explain_empty()
        searcher = Searcher(self.store.conn, self.vectors, self.encoder, self.model)
        return searcher.search(query, opts)

    def _explain_empty(self) -> None:
        """An empty index is not a 'no answer': say why nothing can be searched yet."""
        counts = dict(
            self.store.conn.execute("SELECT state, count(*) FROM documents GROUP BY state")
        )
        if counts.get("stale"):
            raise SearchError(
                f"{counts['stale']} document(s) were indexed with another model and must be "
                "re-embedded first: run `kbapp index` (the app does it by itself)"
            )
        if counts.get("queued") or counts.get("indexing"):
            raise SearchError("nothing is indexed yet; indexing is still under way")
        if not counts.get("indexed"):
            raise SearchError("the library has no indexed documents yet: add a folder first")

    def context(self, query: str, **overrides) -> tuple[str, list[Citation]]:
        result = self.search(query, **overrides)
        citations = cite(result.hits)
        return build_context(result.query, citations), citations

    def status(self) -> LibraryStatus:
        docs = []
        for r in self.store.conn.execute(f"SELECT {_STATUS_COLUMNS} FROM documents ORDER BY path"):
            r = list(r)
            r[7] = json.loads(r[7]) if r[7] else []
            docs.append(DocumentStatus(*r))
        return LibraryStatus(str(self.root), self.model, docs)

    def document_id(self, path: str | os.PathLike[str]) -> int:
        p = str(Path(path).expanduser().resolve())
        row = self.store.conn.execute("SELECT id FROM documents WHERE path=?", (p,)).fetchone()
        if row is None:
            raise LibraryError(f"{p} is not in this library")
        return int(row[0])

    def text(self, doc_id: int) -> str:
        row = self.store.conn.execute("SELECT text FROM texts WHERE doc_id=?", (doc_id,)).fetchone()
        if row is None:
            raise LibraryError("that document has no indexed text (is it indexed?)")
        return row[0]

    def pages(self, doc_id: int) -> list[tuple[int, int, int]]:
        """(page number, char_from, char_to) for a paged document."""
        return list(
            self.store.conn.execute(
                "SELECT number, char_from, char_to FROM pages WHERE doc_id=? ORDER BY number",
                (doc_id,),
            )
        )

    def page_boxes(self, doc_id: int, page: int) -> list[tuple] | None:
        row = self.store.conn.execute(
            "SELECT boxes FROM pages WHERE doc_id=? AND number=?", (doc_id, page)
        ).fetchone()
        return [tuple(b) for b in json.loads(row[0])] if row and row[0] else None

    def show(self, citation: str) -> str:
        """The cited range of the canonical text (a page's text for `#page=N` alone)."""
        loc = parse_citation(citation)
        doc_id = self.document_id(loc.path)
        text = self.text(doc_id)
        if loc.char_from is not None:
            if loc.char_to > len(text):
                raise KbError(f"the range ends past the document's {len(text)} characters")
            return text[loc.char_from : loc.char_to]
        for number, a, b in self.pages(doc_id):
            if number == loc.page:
                return text[a:b]
        raise KbError(f"the document has no page {loc.page}")
