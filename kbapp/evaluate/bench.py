"""`kbapp bench`: indexing throughput against the bare encoder, query latency per mode at
the library's size and at 10k / 100k chunks, and peak RSS; with `--store`, the same indexing
and searches on a team library beside it. Prints JSON; never a test.

The size sweep replicates the corpus's real chunks: texts are repeated with a copy number
appended (BM25), vectors are the real ones plus small Gaussian noise, re-normalised (ANN).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from ..config import REMOTE_SCHEME, load_settings
from ..embed import BACKENDS, load_encoder, model_id, split_model
from ..errors import KbError, ModelError
from ..index import default_workers
from ..search import bm25
from ..store.chunks import scratch_fts
from ..store.vectors import VectorIndex
from . import metrics as M


class RssSampler:
    """Peak resident memory during a block, sampled every `every` seconds: of this process,
    or with `tree`, of this process and every process it started (extraction workers,
    Tesseract)."""

    def __init__(self, tree: bool = False, every: float = 0.02) -> None:
        self.tree, self.every = tree, every
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def rss(pid: int | str = "self") -> int:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * 4096

    def _tree_rss(self) -> int:
        parent: dict[int, int] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                parent[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        family, total = {os.getpid()}, 0
        for pid in sorted(parent):  # a child's pid is usually above its parent's
            if parent[pid] in family:
                family.add(pid)
        for pid in family:
            with contextlib.suppress(OSError):
                total += self.rss(pid)
        return total

    def sample(self) -> int:
        return self._tree_rss() if self.tree else self.rss()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.sample())
            self._stop.wait(self.every)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.sample())

    @property
    def mb(self) -> float:
        return round(self.peak / 2**20, 1)


def latency_ms(fn, queries: list, repeat: int = 1) -> dict:
    """p50/p95 milliseconds of fn over the queries (and their count), for benchmarks."""
    times = []
    for _ in range(repeat):
        for q in queries:
            t = time.perf_counter()
            fn(q)
            times.append((time.perf_counter() - t) * 1000)
    return {"p50": round(M.percentile(times, 0.5), 3), "p95": round(M.percentile(times, 0.95), 3),
            "n": len(times)}  # fmt: skip


def _queries(golden: Path | None, texts: list[str], n: int) -> list[str]:
    if golden is not None:
        rows = [json.loads(line) for line in golden.read_text().splitlines() if line.strip()]
        return [r["query"] for r in rows][:n]
    rng = np.random.default_rng(0)
    picks = rng.choice(len(texts), size=min(n, len(texts)), replace=False)
    return [" ".join(texts[i].split("\n", 1)[-1].split()[:12]) for i in picks]


def _bm25_at(texts: list[str], size: int, queries: list[str]) -> dict:
    rows = ((i + 1, f"{texts[i % len(texts)]} copy{i // len(texts)}") for i in range(size))
    chunks = scratch_fts(rows)
    return latency_ms(lambda q: bm25.search(chunks, q, 40), queries)


def _ann_at(vectors: np.ndarray, size: int, qvecs: np.ndarray, root: Path) -> dict:
    rng = np.random.default_rng(1)
    index = VectorIndex(root, "bench", vectors.shape[1])
    t = time.perf_counter()
    for start in range(0, size, 10000):
        n = min(10000, size - start)
        base = vectors[np.arange(start, start + n) % len(vectors)]
        noisy = base + rng.normal(0, 0.02, base.shape).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        index.add(list(range(start + 1, start + n + 1)), noisy)
    build_s = time.perf_counter() - t
    times = []
    for q in qvecs:
        t = time.perf_counter()
        index.query(q, 40)
        times.append((time.perf_counter() - t) * 1000)
    return {"p50": round(M.percentile(times, 0.5), 3), "p95": round(M.percentile(times, 0.95), 3),
            "n": len(times), "build_s": round(build_s, 1)}  # fmt: skip


def _cold_search(library: Path, texts: list[str], runs: int = 3) -> dict:
    """A one-off `kbapp search` as a user types it: a new process, model load included."""
    import subprocess
    import sys

    query = " ".join(texts[0].split("\n", 1)[-1].split()[:8])
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kbapp", "--library", str(library), "search", query],
                       capture_output=True, check=True)  # fmt: skip
        times.append(time.perf_counter() - t)
    return {"median": round(sorted(times)[len(times) // 2], 2), "min": round(min(times), 2),
            "runs": runs}  # fmt: skip


def _index_once(corpus: Path, root: Path | str):
    """A new library (a folder, or a team library's milvus:// address) indexing corpus:
    (library, seconds to the last commit, seconds with the gate's calibration after it,
    progress, peak RSS of the process tree)."""
    from ..library import Library

    settings = load_settings(root)
    lib = Library(settings)
    if lib.store.chunks.all_texts():
        lib.close()
        raise KbError(f"{root} already holds passages: bench measures indexing into an empty library")
    lib.encoder  # noqa: B018 - loaded before timing: model load is not indexing
    last = [0.0]

    def seen(_p) -> None:  # the last report is the last document's commit
        last[0] = time.perf_counter()

    with RssSampler(tree=True, every=0.2) as rss:  # the workers count too
        t = time.perf_counter()
        progress = lib.index([corpus], progress=seen)
        total = time.perf_counter() - t
    return lib, (last[0] - t) if last[0] else total, total, progress, rss.peak


def run_bench(corpus: Path, golden: Path | None, sizes: list[int], queries_n: int = 100,
              rounds: int = 3, store: str | None = None) -> dict:  # fmt: skip
    """`rounds`: each indexing run and each bare encoder is timed that many times,
    interleaved, and the fastest counts: on a shared machine a neighbour's burst would
    otherwise decide the ratio. `store`: a team library's address (milvus://...) that the
    corpus is also indexed into once and searched the same way, in the same run."""
    out: dict = {"corpus": str(corpus), "sweep_data": "replicated real chunks (see module doc)",
                 "rounds": rounds}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="kbapp-bench-") as tmp:
        runs, peak, lib = [], 0, None
        bare: dict[str, float] = {}
        texts: list[str] = []
        for r in range(max(1, rounds)):
            if lib is not None:
                lib.close()
            lib, index_s, total_s, progress, rss = _index_once(corpus, Path(tmp) / f"lib{r}")
            runs.append((index_s, total_s))
            if r == 0:  # before the other backends are loaded into this process
                peak = rss
            texts = lib.store.chunks.all_texts()
            if not texts:
                raise KbError(f"nothing was indexed from {corpus}")
            for backend in BACKENDS:  # each backend's bare encoder, on the same chunks
                try:
                    enc = load_encoder(model_id(split_model(lib.model)[0], backend))
                except ModelError as exc:  # torch without the torch extra: said, not fatal
                    out.setdefault("backends_not_measured", {})[backend] = str(exc)
                    continue
                enc.encode(texts[:64], batch_size=lib.settings.batch_size)  # warm
                t = time.perf_counter()
                enc.encode(texts, batch_size=lib.settings.batch_size)
                bare[backend] = min(bare.get(backend, 1e9), time.perf_counter() - t)
        assert lib is not None
        settings, enc, n = lib.settings, lib.encoder, len(texts)
        index_s = min(i for i, _ in runs)
        total_s = min(t for _, t in runs)
        backends = {b: round(n / s, 1) for b, s in bare.items()}
        own = backends[split_model(lib.model)[1]]
        torch_cps = backends.get("torch")
        out["indexing"] = {
            "documents": progress.indexed, "chunks": n, "seconds": round(index_s, 2),
            "model": lib.model, "workers": settings.workers or default_workers(),
            "chunks_per_s": round(n / index_s, 1), "bare_encoder_chunks_per_s": own,
            "ratio_to_bare_encoder": round((n / index_s) / own, 3),
            "bare_torch_fp32_chunks_per_s": torch_cps,
            "bare_chunks_per_s_by_backend": backends,
            "ratio_to_bare_torch_fp32": round((n / index_s) / torch_cps, 3) if torch_cps else None,
            "ms_per_chunk": round(index_s * 1000 / n, 2), "peak_rss_mb": round(peak / 2**20),
            "runs_s": [round(i, 2) for i, _ in runs],
            # The gate's self-calibration runs after the last commit, in the same call
            # (documents are searchable before it): its cost, and the rate with it.
            "calibration_s": round(total_s - index_s, 2),
            "chunks_per_s_with_calibration": round(n / total_s, 1),
        }  # fmt: skip
        out["cli_search_cold_s"] = _cold_search(settings.library, texts)

        queries = _queries(golden, texts, queries_n)
        out["query_embed_ms"] = latency_ms(lambda q: enc.encode([q]), queries)
        out["search_ms"], out["search_peak_rss_mb"] = _searches(lib, queries)
        out["dense_p50_over_embed_p50"] = round(
            out["search_ms"]["dense"]["p50"] / out["query_embed_ms"]["p50"], 3
        )
        vectors = np.frombuffer(
            lib.store.chunks.all_vectors(),
            dtype=np.float32,
        ).reshape(n, -1)
        qvecs = enc.encode(queries)
        out["sweep"] = {}
        for size in sizes:
            out["sweep"][str(size)] = {
                "bm25_ms": _bm25_at(texts, size, queries),
                "ann_ms": _ann_at(vectors, size, qvecs, Path(tmp)),
            }
        lib.close()
        if store:
            out["team"] = _team(corpus, store, queries, n)
    return out


def _searches(lib, queries: list[str]) -> tuple[dict, int]:
    """p50/p95 of each mode as a user searches (the query embedding included, no floor),
    and the peak RSS meanwhile in MB."""
    with RssSampler() as rss:
        for q in queries[:5]:  # warm-up
            lib.search(q, mode="dense")
        ms = {mode: latency_ms(lambda q, m=mode: lib.search(q, mode=m, min_dense=-1.0, weak_dense=-1.0),
                               queries)
              for mode in ("dense", "bm25", "hybrid", "auto")}  # fmt: skip
    return ms, round(rss.peak / 2**20)


def _team(corpus: Path, store: str, queries: list[str], local_chunks: int) -> dict:
    """The same corpus indexed once into a team library at `store` (milvus://...), and the
    same searches, in the run that measured the local library."""
    lib, index_s, total_s, progress, rss = _index_once(corpus, store)
    try:
        n = len(lib.store.chunks.all_texts())
        if n != local_chunks:  # the same chunker either way: a difference is a fault
            raise KbError(f"the team library holds {n} passages where the local one holds {local_chunks}")
        out = {"library": store, "indexing": {
            "documents": progress.indexed, "chunks": n, "seconds": round(index_s, 2),
            "chunks_per_s": round(n / index_s, 1), "peak_rss_mb": round(rss / 2**20),
            "calibration_s": round(total_s - index_s, 2)}}  # fmt: skip
        out["search_ms"], out["search_peak_rss_mb"] = _searches(lib, queries)
    finally:
        lib.close()
    return out


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("corpus", type=Path, help="folder of documents to index")
    p.add_argument("--golden", type=Path, help="take queries from this golden file")
    p.add_argument("--sizes", default="10000,100000", help="chunk counts for the size sweep")
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3,
                   help="time indexing and each bare encoder this many times; the fastest counts")
    p.add_argument("--store", metavar="milvus://...",
                   help="also index the corpus into this empty team library (a Milvus Lite file "
                        "milvus:///PATH.db or a server milvus://HOST:PORT/NAME) and search it the "
                        "same way, beside the local library in the same run")  # fmt: skip
    p.add_argument("--json", dest="json_out", type=Path, help="also write the JSON here")


def run_bench_command(a: argparse.Namespace) -> int:
    if not a.corpus.is_dir():
        raise KbError(f"{a.corpus} is not a folder")
    if a.store and not a.store.startswith(REMOTE_SCHEME):
        raise KbError(f"--store takes a team library's address ({REMOTE_SCHEME}HOST:PORT/NAME or "
                      f"{REMOTE_SCHEME}/PATH.db), not {a.store!r}")  # fmt: skip
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    report = run_bench(a.corpus.resolve(), a.golden, sizes, a.queries, a.rounds, a.store)
    text = json.dumps(report, indent=2)
    print(text)
    if a.json_out:
        a.json_out.write_text(text)
    return 0


__all__ = ["add_bench_arguments", "run_bench", "run_bench_command"]
