"""Library: the one object the CLI, the GUI and the tests use.

open a folder -> add folders -> index() -> search() / status() / show() / context().
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote

import numpy as np

from .calibrate import FALLBACK_FLOOR, FALLBACK_WEAK, WEAK_MARGIN, Calibration
from .calibrate import calibrate as measure_calibration
from .calibrate import meta_key as calibration_key
from .cite import Citation, a1_rows, build_context, cite, parse_citation
from .config import BUNDLED_MODEL, Scope, SearchOptions, Settings, load_settings
from .embed import DEFAULT_BACKEND, Encoder, load_encoder, model_id, split_model
from .errors import KbError, LibraryBusy, LibraryError, SearchError
from .extract import EXTRACTOR_VERSION
from .paths import display_path, from_db, to_db
from .pipeline import PIPELINE_BASE, IndexJob, Progress, ProgressFn, retry_columns
from .search import Searcher, SearchResult
from .store import DocumentRow, Store, VectorIndex
from .store.db import DB_NAME
from .store.vectors import INDEX_FILE, STAMP_FILE
from .wording import count

log = logging.getLogger(__name__)

LOCK_FILE = "writer.lock"
FOLDERS_FILE = "folders.json"




@dataclass(frozen=True)
class LibraryStatus:
    library: str
    model: str
    documents: list[DocumentRow]  # every document, its state and reason

    def count(self, state: str) -> int:
        return sum(1 for d in self.documents if d.state == state)

    @property
    def chunks(self) -> int:
        return sum(d.chunks or 0 for d in self.documents if d.state == "indexed")


@dataclass(frozen=True)
class CheckReport:
    database: list[str]  # SQLite's findings; [] when every page is sound
    mismatched: list[tuple[int, str]]  # (chunk id, document) whose quote is not its slice
    vectors: int

    @property
    def ok(self) -> bool:
        return not self.database and not self.mismatched

    def describe(self) -> str:
        if self.ok:
            return f"the library is sound: {count(self.vectors, 'passage')} searchable"
        lines = ["the library is damaged:"]
        lines += [f"  database: {p}" for p in self.database[:10]]
        docs = sorted({display_path(d) for _, d in self.mismatched})
        if self.mismatched:
            lines.append(f"  {len(self.mismatched)} passage(s) no longer match their document's "
                         f"text (they are never quoted): {', '.join(docs[:5])}")  # fmt: skip
        lines.append("run `kbapp rebuild` to read every document again from its file "
                     "(folders are kept)")  # fmt: skip
        return "\n".join(lines)


class Library:
    """The engine's one entry point. Opening a library never writes to it: the model stamp,
    stale marks and folders are written only by writing verbs, under the writer lock."""

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
        self._checked = False  # SQLite's page check passed for this open library
        try:
            self.stored_model = self.store.get_meta("model")
        except sqlite3.DatabaseError as exc:  # damaged: `check` explains, `rebuild` mends
            log.error("the library database is damaged: %s", exc)
            self.stored_model = None
        # The library remembers its model: without an explicit choice it keeps the one it
        # was indexed with, so starting without --model never makes anything stale.
        # A backend (torch, ONNX fp32/int8) is part of the model id, as a model change.
        if encoder is not None:
            self.model = encoder.name
        else:
            stored_name, stored_backend = split_model(self.stored_model or BUNDLED_MODEL)
            name = settings.model or stored_name
            same = self.stored_model is not None and name == stored_name
            backend = settings.backend or (stored_backend if same else DEFAULT_BACKEND)
            self.model = model_id(name, backend)

    @classmethod
    def open(
        cls, path: str | os.PathLike[str] | None = None, model: str | None = None,
        encoder: Encoder | None = None, create: bool = True, **settings_overrides,
    ) -> Library:  # fmt: skip
        """Defaults and KBAPP_* settings, then the given path, model and overrides.
        With create=False a path that holds no library is refused and nothing is made
        there (a mistyped --library for a search must not leave an empty library)."""
        settings = load_settings(path)
        if not create and not (settings.library / DB_NAME).is_file():
            raise LibraryError(
                f"there is no library at {display_path(str(settings.library))}: check the "
                "--library path; `kbapp index FOLDER` creates a library and fills it"
            )
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
    def stamp(self) -> tuple[str, str, str]:
        """(extractor, pipeline, model) versions: a document indexed under another is stale."""
        return (EXTRACTOR_VERSION, self.pipeline_version, self.model)

    @property
    def encoder(self) -> Encoder:
        with self._elock:
            if self._encoder is None:
                self._encoder = load_encoder(self.model)
            return self._encoder

    @property
    def vectors(self) -> VectorIndex:
        """The vector cache, following SQLite: when another process (or thread) has
        committed since it was last read, it catches up with what changed."""
        with self._vlock:
            if self._vectors is None:
                self._vectors = self._load_vectors()
            elif self._vectors.generation != self.store.generation():
                self._follow()
            return self._vectors

    def _load_vectors(self) -> VectorIndex:
        chunks = self.store.chunks
        index = VectorIndex(self.root, self.model, self.encoder.dims)
        gen = self.store.generation()
        count = chunks.searchable_count(self.model)
        if not index.load(gen, count, sample=lambda ids: dict(chunks.vectors(ids))):
            index.rebuild(chunks.searchable_vectors(self.model), count, gen)
            log.info("built the vector cache from SQLite: %d vectors", count)
            with contextlib.suppress(LibraryBusy, OSError), self.writer(wait=False):
                index.save()
        return index

    def _follow(self) -> None:
        """Another writer committed: add and drop exactly what changed (no full rebuild)."""
        assert self._vectors is not None
        chunks = self.store.chunks
        gen = self.store.generation()
        added, removed = self._vectors.sync(
            chunks.searchable_ids(self.model), chunks.vectors, gen
        )
        if added or removed:
            log.info("library changed elsewhere: %d vectors added, %d removed", added, removed)

    def save_vectors(self) -> None:
        if self._vectors is not None:
            self._vectors.save()

    @contextlib.contextmanager
    def writer(self, wait: bool = False) -> Iterator[None]:
        """The single-writer lock, across processes (flock) and threads. Without `wait`,
        a writer on another thread of this process is refused at once too, never waited for."""
        if not self._wlock.acquire(blocking=wait):
            raise LibraryBusy(
                f"the library at {self.root} is being written by this kbapp (indexing); "
                "try again when it has finished"
            )
        try:
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
        finally:
            self._wlock.release()

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

    # -- writing: every method here holds the writer lock ----------------------------------
    def prepare_to_write(self) -> None:
        """Stamp the library with this model and mark what was indexed otherwise stale.
        Called by every writing verb, under the writer lock."""
        with self.writer():
            store = self.store
            # SQLite's page check before the first write of this process: indexing into a
            # damaged file would bury the damage under new rows. It reads every page
            # (measured 0.5 s for 6,270 passages / 27 MB, 2.8 s for 10,520 / 54 MB with
            # another job running), so it runs once per open library, not per rescan.
            problems = [] if self._checked else store.integrity()
            self._checked = not problems
            if problems:
                raise LibraryError(
                    f"the library database is damaged ({problems[0]}); nothing was changed. "
                    "`kbapp check` says what is wrong and `kbapp rebuild` reads every "
                    "document again, keeping your folders"
                )
            if self.stored_model != self.model:
                if self.stored_model:
                    log.info("model changed from %s to %s: documents are stale",
                             self.stored_model, self.model)  # fmt: skip
                store.set_meta("model", self.model)
                self.stored_model = self.model
            store.documents.mark_stale(self.stamp)
            self._save_folder_list()  # libraries made before the copy existed get one

    def folder_id(self, path: Path) -> int | None:
        if not path.is_dir():
            return None
        with self.writer():
            known = self.store.folders.id_of(str(path))
            if known is not None:
                return known
            folder = self.store.folders.ensure(str(path))
            self._save_folder_list()
            return folder

    def _save_folder_list(self) -> None:
        """A copy of the folder list beside the database, so `rebuild` keeps the folders
        even when the database pages that held them are damaged."""
        rows = [{"path": to_db(p), "paused": paused} for p, paused in self.store.folders.all()]
        tmp = self.root / (FOLDERS_FILE + ".tmp")
        tmp.write_text(json.dumps(rows, ensure_ascii=False))
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.root / FOLDERS_FILE)

    def _saved_folder_list(self) -> list[tuple[str, bool]]:
        try:
            rows = json.loads((self.root / FOLDERS_FILE).read_text())
            return [(from_db(r["path"]), bool(r["paused"])) for r in rows]
        except (OSError, ValueError, KeyError, TypeError):
            return []

    def add_folder(self, path: str | os.PathLike[str]) -> Path:
        p = Path(path).expanduser().resolve()
        if not p.exists():
            raise LibraryError(f"no such folder or file: {display_path(str(p))}")
        self.folder_id(p)
        return p

    def remove_folder(self, path: str | os.PathLike[str]) -> int:
        """Forget a folder: its documents leave the index. Returns how many."""
        p = str(Path(path).expanduser().resolve())
        store = self.store
        with self.writer():
            folder = store.folders.id_of(p)
            if folder is None:
                raise LibraryError(f"{display_path(p)} is not a folder of this library")
            ids = store.documents.ids_in_folder(folder)
            for doc_id in ids:
                self.delete_document(doc_id)
            store.folders.remove(folder)
            self._save_folder_list()
            self.save_vectors()
        return len(ids)

    def set_folder_paused(self, path: str | os.PathLike[str], paused: bool,
                          wait: bool = False) -> None:  # fmt: skip
        with self.writer(wait=wait):
            self.store.folders.set_paused(str(Path(path).expanduser().resolve()), paused)
            self._save_folder_list()

    def clear_document(self, doc_id: int, state: str, reason: str | None,
                       retry: bool = False) -> None:  # fmt: skip
        """A document that yields nothing searchable now: `failed`, `unsupported` or
        `skipped` with its reason. `retry`: the cause may pass; it is read again later
        by itself (a few times), and the reason says so."""
        docs = self.store.documents
        with self.writer():
            extra = retry_columns(retry, docs.tries(doc_id))
            if retry and extra["retry_after"] is None:
                reason = f"{reason} (gave up after {extra['tries']} tries; Retry reads it again)"
            old, gen = docs.clear(doc_id, state, reason, extra)
            if old:
                self.vectors_changed(old, gen)

    def delete_document(self, doc_id: int) -> None:
        with self.writer():
            old, gen = self.store.documents.delete(doc_id)
            self.vectors_changed(old, gen)

    def vectors_changed(
        self, removed: list[int], gen: int | None, added: list[int] | None = None,
        vectors: np.ndarray | None = None,
    ) -> None:  # fmt: skip
        """This process committed: apply the same change to the cache (built on first use,
        so an indexing run leaves a saved cache behind)."""
        with self._vlock:
            if self._vectors is None:
                if added:
                    self._vectors = self._load_vectors()  # already holds this commit
                return
            self._vectors.remove(removed)
            if added:
                self._vectors.add(added, vectors)
            if gen is not None:
                self._vectors.generation = gen

    def index(
        self, paths: list[str | os.PathLike[str]] | None = None, progress: ProgressFn | None = None,
        cancel: threading.Event | None = None, wait: bool = False,
    ) -> Progress:  # fmt: skip
        """Index the given folders/files (registering folders), or every watched folder.
        `wait`: wait for another writer to finish instead of failing with LibraryBusy."""
        with self.writer(wait=wait):
            self.prepare_to_write()
            roots = [self.add_folder(p) for p in paths] if paths else None
            self.store.documents.move_state("stale", "queued")  # re-embedded by this run
            done = IndexJob(self, roots, progress, cancel).run()
            self._recalibrate_if_changed()
            return done

    def retry(self, path: str | os.PathLike[str] | None = None,
              progress: ProgressFn | None = None) -> Progress:  # fmt: skip
        """Index failed documents again (all, or the one at path)."""
        with self.writer():
            self.prepare_to_write()
            docs = self.store.documents
            ids = docs.ids_in_state("failed") if path is None else [self.document_id(path)]
            done = IndexJob(self, progress=progress, only_ids=ids).run()
            self._recalibrate_if_changed()
            return done

    def rebuild(self, progress: ProgressFn | None = None) -> Progress:
        """Start the library again from the source files, keeping its folders: the damaged
        database is set aside (library.db.damaged-TIME) and every document read anew."""
        with self.writer():
            try:
                folders = self.store.folders.all()
            except sqlite3.DatabaseError:
                folders = self._saved_folder_list()
                log.warning("the folder list in the database is unreadable; using the copy "
                            "in %s (%d folders)", FOLDERS_FILE, len(folders))  # fmt: skip
            self.close()
            stamp = time.strftime("%Y%m%d-%H%M%S")
            for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"):
                p = self.root / name
                if p.exists():
                    os.replace(p, self.root / f"{name}.damaged-{stamp}")
            for name in (INDEX_FILE, STAMP_FILE):
                (self.root / name).unlink(missing_ok=True)
            with self._vlock:
                self._vectors = None
            self.stored_model = None
            self.prepare_to_write()
            for path, paused in folders:
                self.store.folders.ensure(path)
                if paused:
                    self.store.folders.set_paused(path, True)
            self._save_folder_list()
            return self.index(progress=progress)

    def check(self) -> CheckReport:
        """Is the library sound? SQLite's page check, every quote against its canonical
        slice, and the vector cache against SQLite."""
        store = self.store
        problems = store.integrity()
        try:
            mismatched = store.chunks.mismatched()
        except sqlite3.DatabaseError as exc:
            problems.append(str(exc))
            mismatched = []
        try:
            with self._vlock:
                self._vectors = None  # loading verifies the cache (and rebuilds it if needed)
                cached = len(self.vectors)
        except sqlite3.DatabaseError as exc:
            problems.append(str(exc))
            cached = 0
        return CheckReport(problems, mismatched, cached)

    # -- reading --------------------------------------------------------------------------
    def folder_paths(self) -> list[Path]:
        return [Path(p) for p, paused in self.store.folders.all() if not paused]

    def folders(self) -> list[tuple[str, bool]]:
        return self.store.folders.all()

    # -- search settings: stored in the library, per model (CLI and window share them) -------
    SEARCH_KEYS = ("mode", "prose_mode", "top_k", "min_dense", "weak_dense")

    def _settings_key(self) -> str:
        return f"search@{self.model}"

    @property
    def search_defaults(self) -> SearchOptions:
        """Defaults and KBAPP_* settings, then what was saved for this library and model
        (`kbapp settings`, the window's search settings); a request's overrides go on top."""
        base = self.settings.search
        try:
            raw = self.store.get_meta(self._settings_key())
            saved = json.loads(raw) if raw else {}
            return base.with_overrides(**{k: saved.get(k) for k in self.SEARCH_KEYS})
        except (ValueError, TypeError, KbError, sqlite3.DatabaseError):
            return base  # an unreadable saved value never stops a search

    def save_search_settings(self, opts: SearchOptions, wait: bool = False) -> None:
        """Remember these settings for this library and model. A threshold of None means
        "follow the calibration" (an override is reset). LibraryBusy while another writer
        holds the library and `wait` is False."""
        values = {k: getattr(opts, k) for k in self.SEARCH_KEYS}
        with self.writer(wait=wait):
            self.store.set_meta(self._settings_key(), json.dumps(values))

    def search(
        self, query: str, options: SearchOptions | None = None, scope: Scope | None = None,
        **overrides,
    ) -> SearchResult:  # fmt: skip
        """Search the library (or the documents in `scope`: a folder, kinds, a date)."""
        opts, source = self.gate_options((options or self.search_defaults).with_overrides(**overrides))
        vectors = self.vectors
        if len(vectors) == 0:
            self._explain_empty()
        searcher = Searcher(self.store.chunks, vectors, self.encoder, self.model)
        result = searcher.search(query, opts, scope)
        result.floor_source = source
        return result

    # -- the gate's calibration (kbapp.calibrate) -------------------------------------

    @property
    def calibration(self) -> Calibration | None:
        """This library's calibration for its current model, if one was measured."""
        raw = self.store.get_meta(calibration_key(self.model))
        return Calibration.from_json(raw) if raw else None

    def calibrate(self) -> Calibration | None:
        """Measure the gate on this library now and store it (None: too few chunks yet)."""
        cal = measure_calibration(self)
        if cal is not None:
            with self.writer(wait=True):
                self.store.set_meta(calibration_key(self.model), cal.to_json())
        return cal

    def _recalibrate_if_changed(self) -> None:
        """After indexing: measure again when the library changed materially (no
        calibration for this model yet, or a tenth of its chunks more or fewer)."""
        cal = self.calibration
        n = self.store.chunks.searchable_count(self.model)
        if cal is None or abs(n - cal.chunks) > max(0.1 * cal.chunks, 50):
            try:
                cal = measure_calibration(self)
            except KbError as exc:  # never lose an index run to its calibration
                log.warning("calibration skipped: %s", exc)
                return
            if cal is not None:
                self.store.set_meta(calibration_key(self.model), cal.to_json())

    def gate_options(self, opts: SearchOptions) -> tuple[SearchOptions, str]:
        """The thresholds a search uses and where they come from: set explicitly ("set"),
        this library's calibration ("calibrated"), or the fixed default ("default")."""
        cal = self.calibration
        if opts.min_dense is not None:
            source, floor = "set", opts.min_dense
        elif cal is not None:
            source, floor = "calibrated", cal.floor
        else:
            source, floor = "default", FALLBACK_FLOOR
        if opts.weak_dense is not None:
            weak = opts.weak_dense
        elif source == "calibrated":
            weak = cal.weak
        else:
            weak = min(1.0, floor + WEAK_MARGIN) if source == "set" else FALLBACK_WEAK
        if weak < floor:
            raise SearchError(
                f"the weak-match threshold ({weak}) must not be below the floor ({floor})"
            )
        return replace(opts, min_dense=floor, weak_dense=weak), source

    def _explain_empty(self) -> None:
        """An empty index is not a 'no answer': say why nothing can be searched yet."""
        docs = self.store.documents
        counts = docs.state_counts()
        other = docs.indexed_with_other_model(self.model)
        if counts.get("stale") or other:
            raise SearchError(
                f"{counts.get('stale', 0) + other} document(s) were indexed with another model "
                f"than {self.model} and must be re-embedded first: run `kbapp index` with this "
                "model (the app does it by itself)"
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
        """Every document as this library, with this model, sees it: one indexed under
        another model or pipeline is reported `stale` (it is not searchable) even before a
        writing verb has stored that mark."""
        rows = [
            replace(d, state="stale")
            if d.state == "indexed"
            and (d.extractor_version, d.pipeline_version, d.model) != self.stamp
            else d
            for d in self.store.documents.status_rows()
        ]
        return LibraryStatus(str(self.root), self.model, rows)

    def document_id(self, path: str | os.PathLike[str]) -> int:
        """The document at a path as the user gives it: the link's own path for a
        symlinked file (that is what is stored), the resolved path otherwise."""
        given = Path(path).expanduser()
        plain = Path(os.path.abspath(given))
        for p in (plain, plain.parent.resolve() / plain.name, given.resolve()):
            doc_id = self.store.documents.id_of(str(p))
            if doc_id is not None:
                return doc_id
        raise LibraryError(f"{display_path(str(plain))} is not in this library")

    def text(self, doc_id: int) -> str:
        text = self.store.documents.text(doc_id)
        if text is None:
            raise LibraryError("that document has no indexed text (is it indexed?)")
        return text

    def pages(self, doc_id: int) -> list[tuple[int, int, int]]:
        """(page number, char_from, char_to) for a paged document."""
        return self.store.documents.pages(doc_id)

    def page_boxes(self, doc_id: int, page: int) -> list[tuple] | None:
        return self.store.documents.page_boxes(doc_id, page)

    def _show_sheet(self, doc_id: int, text: str, loc) -> str:
        """A sheet's passages that hold the cited rows (all of the sheet without a range)."""
        spans, sheets = [], []
        for locator, a, b in self.store.documents.located(doc_id):
            fields = dict(p.split("=", 1) for p in (locator or "").split("&") if "=" in p)
            if "sheet" not in fields:
                continue
            name = unquote(fields["sheet"])
            if name not in sheets:
                sheets.append(name)
            if name != loc.sheet:
                continue
            r1, r2 = a1_rows(fields.get("range", "A1"))
            if loc.row_from is None or (r1 <= loc.row_to and loc.row_from <= r2):
                spans.append((a, b))
        if not spans:
            if loc.sheet not in sheets:
                listed = ", ".join(repr(n) for n in sheets) or "none with text"
                raise KbError(f"the workbook has no sheet {loc.sheet!r}; its sheets: {listed}")
            raise KbError(f"sheet {loc.sheet!r} has no text in rows {loc.row_from}-{loc.row_to}")
        return text[min(a for a, _ in spans) : max(b for _, b in spans)]

    def show(self, citation: str) -> str:
        """The cited range of the canonical text (a page's, slide's or message's text for
        `#page=N` alone, the lines for `#line=a,b` alone)."""
        loc = parse_citation(citation)
        doc_id = self.document_id(loc.path)
        text = self.text(doc_id)
        if loc.sheet is not None and loc.char_from is None:
            return self._show_sheet(doc_id, text, loc)
        if loc.char_from is not None:
            if loc.char_to > len(text):
                raise KbError(f"the range ends past the document's {len(text)} characters")
            return text[loc.char_from : loc.char_to]
        if loc.line_from is not None:
            lines = text.splitlines(keepends=True)
            if loc.line_to > len(lines):
                raise KbError(f"the range ends past the document's {len(lines)} lines")
            return "".join(lines[loc.line_from - 1 : loc.line_to])
        for number, a, b in self.pages(doc_id):
            if number == loc.page:
                return text[a:b]
        raise KbError(f"the document has no {loc.unit} {loc.page}")
