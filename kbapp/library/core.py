"""Library: the one object the CLI, the GUI and the tests use.

open a folder -> add folders -> index() -> search() / status() / show() / context().
The facade holds what one open library is (its settings, model, per-thread connections)
and delegates: the storage (kbapp.store: the writer lock, the dense search), the folder list's
copy (`folders`), saved search settings and the gate's thresholds (`settings`), reading
back (`show`), and indexing (`kbapp.index`).
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path

from ..calibrate import Calibration
from ..calibrate import calibrate as measure_calibration
from ..cite import Citation, build_context, cite
from ..config import BUNDLED_MODEL, Scope, SearchOptions, Settings, load_settings
from ..embed import DEFAULT_BACKEND, Encoder, load_encoder, model_id, split_model
from ..errors import KbError, LibraryError, SearchError
from ..extract import EXTRACTOR_VERSION
from ..index import PIPELINE_BASE, IndexJob, Progress, ProgressFn
from ..index.commit import delete
from ..index.progress import CALIBRATION
from ..paths import display_path
from ..search import Searcher, SearchResult
from ..store import open_storage
from ..store.backend import Backend, DenseSearch
from . import folders as folder_copy
from . import settings as saved
from . import show as reading
from .status import CheckReport, LibraryStatus

log = logging.getLogger(__name__)


class Library:
    """The engine's one entry point. Opening a library never writes to it: the model stamp,
    stale marks and folders are written only by writing verbs, under the writer lock."""

    SEARCH_KEYS = saved.SEARCH_KEYS

    def __init__(self, settings: Settings, encoder: Encoder | None = None) -> None:
        self.settings = settings
        self.root = settings.library
        self.pipeline_version = f"{PIPELINE_BASE}:{settings.chunk.signature}"
        self._encoder = encoder
        self._local = threading.local()
        self._elock = threading.Lock()
        self.storage = open_storage(settings)
        self._writer = self.storage.writer()
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
        self.cache = self.storage.vectors(self.model, lambda: self.store,
                                          lambda: self.encoder.dims, self.writer)  # fmt: skip

    @classmethod
    def open(
        cls, path: str | os.PathLike[str] | None = None, model: str | None = None,
        encoder: Encoder | None = None, create: bool = True, **settings_overrides,
    ) -> Library:  # fmt: skip
        """Defaults and KBAPP_* settings, then the given path, model and overrides.
        With create=False a path that holds no library is refused and nothing is made
        there (a mistyped --library for a search must not leave an empty library)."""
        settings = load_settings(path)
        if not create and not open_storage(settings).exists():
            raise LibraryError(
                f"there is no library at {display_path(settings.location)}: check the "
                "--library path; `kbapp index FOLDER` creates a library and fills it"
            )
        if model:
            settings_overrides["model"] = model
        if settings_overrides:
            settings = replace(settings, **settings_overrides)
        return cls(settings, encoder)

    # -- plumbing -------------------------------------------------------------------------
    @property
    def store(self) -> Backend:
        """One connection per thread: the GUI searches while the indexer writes."""
        store = getattr(self._local, "store", None)
        if store is None:
            store = self.storage.connect()
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
    def vectors(self) -> DenseSearch:
        """The dense search, caught up with the store's last commit."""
        return self.cache.get()

    def writer(self, wait: bool = False) -> AbstractContextManager[None]:
        """The single-writer lock, across processes and threads (LibraryBusy without
        `wait` while another writer holds it)."""
        return self._writer(wait)

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
            # damaged file would bury the damage under new rows. It reads every page, so
            # it runs once per open library, not per rescan.
            problems = [] if self._checked else store.integrity()
            self._checked = not problems
            if problems:
                raise LibraryError(
                    f"the library database is damaged ({problems[0]}); nothing was changed. "
                    "`kbapp check` says what is wrong and `kbapp rebuild` reads every "
                    "document again, keeping your folders"
                )
            if self.stored_model != self.model:
                store.check_model(self.model, self.encoder.dims)
                if self.stored_model:
                    log.info("model changed from %s to %s: documents are stale",
                             self.stored_model, self.model)  # fmt: skip
                store.set_meta("model", self.model)
                self.stored_model = self.model
            store.documents.mark_stale(self.stamp)
            self._save_folder_list()  # libraries made before the copy existed get one

    def _save_folder_list(self) -> None:
        if self.storage.kind == "local":  # a team library's folders live in its store
            folder_copy.save_copy(self.root, self.store.folders.all())

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
                delete(self, doc_id)
            store.folders.remove(folder)
            self._save_folder_list()
            self.cache.save()
        return len(ids)

    def set_folder_paused(self, path: str | os.PathLike[str], paused: bool,
                          wait: bool = False) -> None:  # fmt: skip
        with self.writer(wait=wait):
            self.store.folders.set_paused(str(Path(path).expanduser().resolve()), paused)
            self._save_folder_list()

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
            self._recalibrate_if_changed(done)
            return done

    def retry(self, path: str | os.PathLike[str] | None = None,
              progress: ProgressFn | None = None) -> Progress:  # fmt: skip
        """Index failed documents again (all, or the one at path)."""
        with self.writer():
            self.prepare_to_write()
            docs = self.store.documents
            ids = docs.ids_in_state("failed") if path is None else [self.document_id(path)]
            done = IndexJob(self, progress=progress, only_ids=ids).run()
            self._recalibrate_if_changed(done)
            return done

    def rebuild(self, progress: ProgressFn | None = None) -> Progress:
        """Start the library again from the source files, keeping its folders: the damaged
        database is set aside (library.db.damaged-TIME) and every document read anew."""
        with self.writer():
            try:
                folders = self.store.folders.all()
            except sqlite3.DatabaseError:
                folders = folder_copy.saved_copy(self.root)
                log.warning("the folder list in the database is unreadable; using the copy "
                            "in %s (%d folders)", folder_copy.FOLDERS_FILE, len(folders))  # fmt: skip
            self.close()
            self.storage.set_aside()
            self.cache.forget()
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
            self.cache.forget()  # loading verifies the cache (and rebuilds it if needed)
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

    @property
    def search_defaults(self) -> SearchOptions:
        """Defaults and KBAPP_* settings, then what was saved for this library and model
        (`kbapp settings`, the window's search settings); a request's overrides go on top."""
        return saved.saved_search(self.store, self.model, self.settings.search)

    def save_search_settings(self, opts: SearchOptions, wait: bool = False) -> None:
        """Remember these settings for this library and model. A threshold of None means
        "follow the calibration" (an override is reset). LibraryBusy while another writer
        holds the library and `wait` is False."""
        with self.writer(wait=wait):
            saved.save_search(self.store, self.model, opts)

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
        if self.settings.path_map:
            result.hits = [replace(h, path=self.local_path(h.path)) for h in result.hits]
            if result.closest is not None:
                result.closest = replace(result.closest, path=self.local_path(result.closest.path))
        return result

    def local_path(self, path: str) -> str:
        """A document's path as this machine reaches it: a team library's indexer saw
        `/srv/share/x.pdf`, this desktop mounts the share as `/mnt/share` (KBAPP_PATH_MAP)."""
        for there, here in self.settings.path_map:
            base = there.rstrip("/\\")
            if path == base or path.startswith(base + "/"):
                rest = path[len(base):].lstrip("/")
                sep = "\\" if re.match(r"^[A-Za-z]:\\", here) else "/"
                return here.rstrip("/\\") + (sep + rest.replace("/", sep) if rest else "")
        return path

    # -- the gate's calibration (kbapp.calibrate) -------------------------------------
    @property
    def calibration(self) -> Calibration | None:
        """This library's calibration for its current model, if one was measured."""
        return saved.stored_calibration(self.store, self.model)

    def calibrate(self) -> Calibration | None:
        """Measure the gate on this library now and store it (None: too few chunks yet)."""
        cal = measure_calibration(self)
        if cal is not None:
            with self.writer(wait=True):
                saved.store_calibration(self.store, self.model, cal)
        return cal

    def _recalibrate_if_changed(self, run: Progress) -> None:
        """After indexing: measure again when the library changed materially (no
        calibration for this model yet, or a tenth of its chunks more or fewer); the run's
        clock stops after it."""
        t = time.perf_counter()
        try:
            self._recalibrate()
        finally:
            run.spend(CALIBRATION, time.perf_counter() - t)
            run.finished = time.monotonic()

    def _recalibrate(self) -> None:
        cal = self.calibration
        n = self.store.chunks.searchable_count(self.model)
        if cal is None or abs(n - cal.chunks) > max(0.1 * cal.chunks, 50):
            try:
                cal = measure_calibration(self)
            except KbError as exc:  # never lose an index run to its calibration
                log.warning("calibration skipped: %s", exc)
                return
            if cal is not None:
                saved.store_calibration(self.store, self.model, cal)

    def gate_options(self, opts: SearchOptions) -> tuple[SearchOptions, str]:
        """The thresholds a search uses and where they come from ("set", "calibrated",
        "default")."""
        return saved.gate_options(opts, self.calibration)

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
        return LibraryStatus(self.settings.location, self.model, rows)

    def document_id(self, path: str | os.PathLike[str]) -> int:
        """The document at a path as the user gives it."""
        return reading.document_id(self.store, path)

    def text(self, doc_id: int) -> str:
        return reading.document_text(self.store, doc_id)

    def pages(self, doc_id: int) -> list[tuple[int, int, int]]:
        """(page number, char_from, char_to) for a paged document."""
        return self.store.documents.pages(doc_id)

    def page_boxes(self, doc_id: int, page: int) -> list[tuple] | None:
        return self.store.documents.page_boxes(doc_id, page)

    def show(self, citation: str) -> str:
        """The cited range of the canonical text."""
        return reading.show(self.store, citation)


__all__ = ["CheckReport", "Library", "LibraryStatus"]
