"""ANN + BM25 at a million passages, built from a real library's passages: its texts cycled
with a copy tag (BM25, in a database file as a library keeps it) and its vectors plus small
Gaussian noise, re-normalised (hnswlib with kbapp's parameters). Prints JSON: build time,
p50/p95 of each channel with the real query embedding timed apart, peak RSS of each.

    .venv/bin/python tools/synthetic_1m.py LIBRARY_DIR [--size 1000000]

A real library of distinct passages (tools/scale_real.py --library DIR) makes the postings
realistic up to its own size; beyond it every text repeats size/len(library) times, so BM25
here is pessimistic (each term's postings grow with the copies).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from kbapp.evaluate.bench import RssSampler, latency_ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("library", type=Path)
    ap.add_argument("--size", type=int, default=1_000_000)
    a = ap.parse_args()

    from scale_real import QUERIES  # the same questions as the real-library run

    from kbapp.config import load_settings
    from kbapp.library import Library
    from kbapp.search import bm25
    from kbapp.store.chunks import scratch_fts
    from kbapp.store.vectors import VectorIndex
    from kbapp.words import fold

    lib = Library(load_settings(a.library))
    texts = lib.store.chunks.all_texts()
    vectors = np.frombuffer(lib.store.chunks.all_vectors(), dtype=np.float32).reshape(len(texts), -1)
    enc = lib.encoder
    queries = QUERIES * 5
    out: dict = {"size": a.size, "distinct_passages": len(texts), "model": lib.model}
    out["query_embedding"] = latency_ms(lambda q: enc.encode([q]), queries)
    qvecs = enc.encode(QUERIES)
    lib.close()

    with tempfile.TemporaryDirectory(prefix="kb1m-") as tmp:
        with RssSampler() as rss:
            t = time.perf_counter()
            rows = ((i + 1, fold(f"{texts[i % len(texts)]} copy{i // len(texts)}"))
                    for i in range(a.size))  # fmt: skip
            chunks = scratch_fts(rows, str(Path(tmp) / "fts.db"))
            chunks.store.conn.commit()
            build = time.perf_counter() - t
            out["bm25"] = {"build_s": round(build, 1),
                           "database_mb": round((Path(tmp) / "fts.db").stat().st_size / 2**20),
                           **latency_ms(lambda q: bm25.search(chunks, q, 80), queries)}  # fmt: skip
        out["bm25"]["peak_rss_mb"] = round(rss.peak / 2**20)
        chunks.store.conn.close()

        rng = np.random.default_rng(1)
        with RssSampler() as rss:
            index = VectorIndex(Path(tmp), "synthetic", vectors.shape[1])
            t = time.perf_counter()
            for start in range(0, a.size, 20_000):
                n = min(20_000, a.size - start)
                base = vectors[np.arange(start, start + n) % len(vectors)]
                noisy = base + rng.normal(0, 0.02, base.shape).astype(np.float32)
                noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
                index.add(list(range(start + 1, start + n + 1)), noisy)
            build = time.perf_counter() - t
            qs = [qvecs[i % len(qvecs)] for i in range(len(queries))]
            out["ann"] = {"build_s": round(build, 1), **latency_ms(lambda q: index.query(q, 40), qs)}
        out["ann"]["peak_rss_mb"] = round(rss.peak / 2**20)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
