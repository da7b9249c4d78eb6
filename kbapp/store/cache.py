"""The vector cache of one local library and model: the hnswlib index loaded (or built from
SQLite) on first use, following SQLite's generation: when another process or thread has
committed since it was last read, it adds and drops exactly what changed (no rebuild)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np

from ..errors import LibraryBusy
from .backend import Backend
from .vectors import VectorIndex

log = logging.getLogger(__name__)


class VectorCache:
    def __init__(self, root: Path, model: str, store: Callable[[], Backend],
                 dims: Callable[[], int],
                 writer: Callable[..., AbstractContextManager[None]]) -> None:  # fmt: skip
        self.root, self.model = root, model
        self._store, self._dims, self._writer = store, dims, writer  # the caller's thread's
        self.lock = threading.RLock()  # a test watches who takes it
        self._index: VectorIndex | None = None

    def get(self) -> VectorIndex:
        with self.lock:
            if self._index is None:
                self._index = self._load()
            elif self._index.generation != self._store().generation():
                self._follow()
            return self._index

    def forget(self) -> None:
        """Drop the loaded index: the next `get` loads (and verifies) it again."""
        with self.lock:
            self._index = None

    def save(self) -> None:
        if self._index is not None:
            self._index.save()

    def changed(
        self, removed: list[int], gen: int | None, added: list[int] | None = None,
        vectors: np.ndarray | None = None,
    ) -> None:  # fmt: skip
        """This process committed: apply the same change to the cache (built on first use,
        so an indexing run leaves a saved cache behind)."""
        with self.lock:
            if self._index is None:
                if added:
                    self._index = self._load()  # already holds this commit
                return
            self._index.remove(removed)
            if added:
                self._index.add(added, vectors)
            if gen is not None:
                self._index.generation = gen

    def _load(self) -> VectorIndex:
        store = self._store()
        chunks = store.chunks
        index = VectorIndex(self.root, self.model, self._dims())
        gen = store.generation()
        count = chunks.searchable_count(self.model)
        if not index.load(gen, count, sample=lambda ids: dict(chunks.vectors(ids))):
            index.rebuild(chunks.searchable_vectors(self.model), count, gen)
            log.info("built the vector cache from SQLite: %d vectors", count)
            with contextlib.suppress(LibraryBusy, OSError), self._writer(wait=False):
                index.save()
        return index

    def _follow(self) -> None:
        """Another writer committed: add and drop exactly what changed."""
        assert self._index is not None
        chunks = self._store().chunks
        gen = self._store().generation()
        added, removed = self._index.sync(chunks.searchable_ids(self.model), chunks.vectors, gen)
        if added or removed:
            log.info("library changed elsewhere: %d vectors added, %d removed", added, removed)
