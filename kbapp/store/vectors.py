"""The hnswlib index: a cache of the vectors in SQLite, labels = chunk ids.

Saved beside the database with a stamp (model, dims, generation, count). Loaded only when
the stamp matches SQLite; otherwise rebuilt from SQLite. Never the source of truth.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import hnswlib
import numpy as np

log = logging.getLogger(__name__)

INDEX_FILE = "vectors.hnsw"
STAMP_FILE = "vectors.json"
M = 16
EF_CONSTRUCTION = 200
EF_SEARCH = 128
# A search narrowed to at most this many passages compares the query with each of them
# (exact, a few ms); beyond it, the graph search skips the others.
EXACT_WITHIN = 20_000


class VectorIndex:
    def __init__(self, root: Path, model: str, dims: int) -> None:
        self.root = root
        self.model = model
        self.dims = dims
        self.generation = -1
        self._lock = threading.RLock()
        self._alive: set[int] = set()
        self._index = self._empty(1024)

    def _empty(self, capacity: int) -> hnswlib.Index:
        index = hnswlib.Index(space="cosine", dim=self.dims)
        # Deleted slots are reused by later additions: re-indexing never grows the file.
        index.init_index(max_elements=capacity, ef_construction=EF_CONSTRUCTION, M=M,
                         allow_replace_deleted=True)  # fmt: skip
        index.set_ef(EF_SEARCH)
        return index

    def __len__(self) -> int:
        return len(self._alive)

    @property
    def stamp(self) -> dict:
        return {
            "model": self.model,
            "dims": self.dims,
            "generation": self.generation,
            "count": len(self._alive),
        }

    def add(self, ids: list[int], vectors: np.ndarray) -> None:
        if not ids:
            return
        with self._lock:
            fresh = [i for i in ids if i not in self._alive]
            need = len(self._alive) + len(fresh)
            if need > self._index.get_max_elements():
                self._index.resize_index(max(need, self._index.get_max_elements() * 2))
            self._index.add_items(
                vectors, np.asarray(ids, dtype=np.int64), replace_deleted=True
            )
            self._alive.update(ids)

    def sync(
        self, ids_now: list[int], fetch: Callable[[list[int]], Iterable[tuple[int, bytes]]],
        generation: int,
    ) -> tuple[int, int]:  # fmt: skip
        """Catch up with SQLite: drop labels it no longer has, add the ones it gained.
        Returns (added, removed)."""
        with self._lock:
            now = set(ids_now)
            gone = self._alive - now
            new = sorted(now - self._alive)
            self.remove(gone)
            batch = list(fetch(new))
            self._add_blobs([i for i, _ in batch], [b for _, b in batch])
            self.generation = generation
        return len(new), len(gone)

    def remove(self, ids: Iterable[int]) -> None:
        with self._lock:
            for i in ids:
                if i in self._alive:
                    self._index.mark_deleted(i)
                    self._alive.discard(i)

    def query(
        self, vector: np.ndarray, k: int, within: set[int] | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity), best first; only labels in `within` when given
        (a search narrowed to a folder or kind): exact over a small set, the graph search
        with a filter over a large one."""
        with self._lock:
            if within is not None:
                within = within & self._alive
                if len(within) <= EXACT_WITHIN:
                    return self._exact(vector, k, within)
            k = min(k, len(self._alive) if within is None else len(within))
            if k <= 0:
                return []
            self._index.set_ef(max(EF_SEARCH, k * 2))
            try:
                labels, dists = self._index.knn_query(
                    vector.reshape(1, -1), k=k, filter=None if within is None else within.__contains__
                )
            except RuntimeError:  # the filtered graph search found fewer than k
                return self._exact(vector, k, within or self._alive)
        return [(int(i), float(1.0 - d)) for i, d in zip(labels[0], dists[0], strict=True)]

    def _exact(self, vector: np.ndarray, k: int, ids: set[int]) -> list[tuple[int, float]]:
        if not ids or k <= 0:
            return []
        labels = sorted(ids)
        mat = np.asarray(self._index.get_items(labels), dtype=np.float32)
        norms = np.linalg.norm(mat, axis=1)
        norms[norms == 0] = 1.0
        q = vector.astype(np.float32)
        sims = (mat @ q) / (norms * (float(np.linalg.norm(q)) or 1.0))
        top = np.argsort(-sims)[:k]
        return [(labels[i], float(sims[i])) for i in top]

    def rebuild(self, rows: Iterable[tuple[int, bytes]], count: int, generation: int) -> None:
        with self._lock:
            self._index = self._empty(max(1024, count))
            self._alive = set()
            batch_ids: list[int] = []
            batch_vecs: list[bytes] = []
            for cid, blob in rows:
                batch_ids.append(cid)
                batch_vecs.append(blob)
                if len(batch_ids) >= 4096:
                    self._add_blobs(batch_ids, batch_vecs)
                    batch_ids, batch_vecs = [], []
            self._add_blobs(batch_ids, batch_vecs)
            self.generation = generation

    def _add_blobs(self, ids: list[int], blobs: list[bytes]) -> None:
        if ids:
            vecs = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), self.dims)
            self.add(ids, vecs)

    def save(self) -> None:
        """Write the index, then its stamp (atomically renamed): a crash leaves no stamp
        that vouches for a half-written index."""
        with self._lock:
            stamp_path = self.root / STAMP_FILE
            stamp_path.unlink(missing_ok=True)
            tmp = self.root / (INDEX_FILE + ".tmp")
            self._index.save_index(str(tmp))
            os.chmod(tmp, 0o600)  # the library is the user's alone
            os.replace(tmp, self.root / INDEX_FILE)
            stamp = dict(self.stamp, ids_checksum=_checksum(self._alive))
            tmp_stamp = self.root / (STAMP_FILE + ".tmp")
            tmp_stamp.write_text(json.dumps(stamp))
            os.chmod(tmp_stamp, 0o600)
            os.replace(tmp_stamp, stamp_path)

    def load(
        self, generation: int, count: int,
        sample: Callable[[list[int]], dict[int, bytes]] | None = None,
    ) -> bool:  # fmt: skip
        """Load the saved index if its stamp matches what SQLite holds now and a sample of
        its vectors equals SQLite's (a cache damaged inside its payload is not trusted)."""
        if not (self.root / STAMP_FILE).exists():
            return False  # a new library, or a save that did not finish: simply built
        try:
            stamp = json.loads((self.root / STAMP_FILE).read_text())
            expected = {
                "model": self.model, "dims": self.dims, "generation": generation, "count": count,
            }  # fmt: skip
            if any(stamp.get(k) != v for k, v in expected.items()):
                log.info("vector cache stamp %s does not match %s; rebuilding", stamp, expected)
                return False
            index = hnswlib.Index(space="cosine", dim=self.dims)
            index.load_index(str(self.root / INDEX_FILE), max_elements=max(1024, count),
                             allow_replace_deleted=True)  # fmt: skip
            index.set_ef(EF_SEARCH)
            labels = index.get_ids_list()
            alive = set(labels)
            if hasattr(index, "get_deleted_ids"):  # pragma: no cover - newer hnswlib only
                alive -= set(index.get_deleted_ids())
            else:
                alive = {i for i in alive if _not_deleted(index, i)}
            if len(alive) != count or _checksum(alive) != stamp.get("ids_checksum"):
                return False
            if sample is not None and alive and not _agrees(index, alive, sample, self.dims):
                log.warning("the vector cache disagrees with the database; rebuilding it")
                return False
        except Exception as exc:  # noqa: BLE001 - any unreadable cache is simply rebuilt
            log.warning("the vector cache could not be read (%s); rebuilding it", exc)
            return False
        with self._lock:
            self._index = index
            self._alive = alive
            self.generation = generation
        return True


SAMPLE = 64


def _agrees(index: hnswlib.Index, alive: set[int], sample, dims: int) -> bool:
    """Do sampled vectors of the cache equal SQLite's? (both are unit length)"""
    ids = sorted(alive)
    step = max(1, len(ids) // SAMPLE)
    picked = ids[::step][:SAMPLE]
    truth = sample(picked)
    cached = np.asarray(index.get_items(picked), dtype=np.float32)
    for row, cid in zip(cached, picked, strict=True):
        blob = truth.get(cid)
        if blob is None:
            return False
        want = np.frombuffer(blob, dtype=np.float32)
        if want.shape != (dims,) or not np.allclose(row, want, atol=1e-4):
            return False
    return True


def _not_deleted(index: hnswlib.Index, label: int) -> bool:
    try:
        index.get_items([label])
    except RuntimeError:
        return False
    return True


def _checksum(ids: set[int]) -> int:
    return sum(ids) % (1 << 61) ^ len(ids)
