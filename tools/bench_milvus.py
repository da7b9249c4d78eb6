"""The team library's storage beside the local one, in one run, on synthetic passages:
ingestion rate, dense search and BM25 p50/p95 each on its own, a search as a user runs it
(the real model embeds the question, then dense and BM25: `search_with_embed_ms`), and this
process's peak memory.

    .venv/bin/python tools/bench_milvus.py --sizes 10000 100000 1000000 --json docs/eval/bench-milvus.json

Vectors are random unit vectors near 2,000 topic centres, texts are drawn from a 20,000-word
vocabulary (Zipf), so BM25 posting lists have a realistic spread.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kbapp.embed import load_encoder  # noqa: E402
from kbapp.evaluate import metrics as M  # noqa: E402
from kbapp.store.chunks import scratch_fts  # noqa: E402
from kbapp.store.milvus import bm25_text, forget_client  # noqa: E402
from kbapp.store.vectors import VectorIndex  # noqa: E402

DIMS = 384


def corpus(n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[str]]:
    centres = rng.normal(size=(2000, DIMS)).astype(np.float32)
    vecs = centres[rng.integers(0, 2000, n)] + rng.normal(0, 0.6, (n, DIMS)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    vocab = np.array([f"w{i}" for i in range(20000)])
    ranks = np.minimum(rng.zipf(1.2, (n, 60)), 20000) - 1
    return vecs, [" ".join(vocab[r]) for r in ranks]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def lat(fn, queries) -> dict:
    times = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t) * 1000)
    return {"p50": round(M.percentile(times, 0.5), 2), "p95": round(M.percentile(times, 0.95), 2)}


def channels(dense, bm25, qv, qt, enc) -> dict:
    """Each channel's latency alone, and a whole search: embed the question, then both."""
    pairs = list(zip(qv, qt, strict=True))

    def whole(pair) -> None:
        enc.encode([pair[1]])  # the question's vector; the synthetic one is searched
        dense(pair[0])
        bm25(pair[1])

    return {"dense_ms": lat(dense, qv), "bm25_ms": lat(bm25, qt), "search_with_embed_ms": lat(whole, pairs)}


def local(vecs, texts, qv, qt, tmp: Path, enc) -> dict:
    t = time.perf_counter()
    index = VectorIndex(tmp, "bench", DIMS)
    for s in range(0, len(vecs), 10000):
        index.add(list(range(s + 1, min(s + 10000, len(vecs)) + 1)), vecs[s : s + 10000])
    fts = scratch_fts((i + 1, t) for i, t in enumerate(texts))
    ingest = time.perf_counter() - t
    return {"ingest_per_s": round(len(vecs) / ingest),
            **channels(lambda q: index.query(q, 40),
                       lambda q: fts.fts(" OR ".join(f'"{w}"' for w in q.split()), 80), qv, qt, enc)}  # fmt: skip


def milvus(vecs, texts, qv, qt, tmp: Path, enc) -> dict:
    from pymilvus import DataType, Function, FunctionType, MilvusClient

    address = str(tmp / "bench.db")
    c = MilvusClient(address)
    s = c.create_schema(auto_id=False)
    s.add_field("id", DataType.INT64, is_primary=True)
    s.add_field("terms", DataType.VARCHAR, max_length=65535, enable_analyzer=True, enable_match=True,
                analyzer_params={"tokenizer": "standard"})  # fmt: skip
    s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    s.add_field("vector", DataType.FLOAT_VECTOR, dim=DIMS)
    s.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                            input_field_names=["terms"], output_field_names=["sparse"]))  # fmt: skip
    p = c.prepare_index_params()
    p.add_index("vector", index_type="HNSW", metric_type="COSINE", params={"M": 16, "efConstruction": 200})
    p.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    c.create_collection("p", schema=s, index_params=p, consistency_level="Strong")
    t = time.perf_counter()
    for s0 in range(0, len(vecs), 2000):
        c.insert("p", [{"id": i + 1, "terms": bm25_text(texts[i]), "vector": vecs[i].tolist()}
                       for i in range(s0, min(s0 + 2000, len(vecs)))])  # fmt: skip
    c.flush("p")  # sealed segments get their HNSW and inverted indexes
    c.load_collection("p")
    c.search("p", data=[qv[0].tolist()], anns_field="vector", limit=1)  # the index is built
    ingest = time.perf_counter() - t
    out = {"ingest_per_s": round(len(vecs) / ingest),
           **channels(lambda q: c.search("p", data=[q.tolist()], anns_field="vector", limit=40,
                                         search_params={"params": {"ef": 128}}),
                      lambda q: c.search("p", data=[q], anns_field="sparse", limit=80,
                                         search_params={"metric_type": "BM25"}), qv, qt, enc)}  # fmt: skip
    c.close()
    forget_client(address)
    out["disk_mb"] = round(sum(f.stat().st_size for f in Path(address).rglob("*") if f.is_file()) / 1e6, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    rng = np.random.default_rng(7)
    enc = load_encoder()  # the bundled model, as a new library uses it
    enc.encode(["warm up"])
    out = {"dims": DIMS, "model": enc.name, "sizes": {}}
    for n in a.sizes:
        vecs, texts = corpus(n, rng)
        qv = vecs[rng.integers(0, n, a.queries)] + rng.normal(0, 0.3, (a.queries, DIMS)).astype(np.float32)
        qt = [" ".join(texts[i].split()[:6]) for i in rng.integers(0, n, a.queries)]
        tmp = Path(tempfile.mkdtemp(prefix="kbapp-bench-milvus-"))
        try:
            row = {"local": local(vecs, texts, qv, qt, tmp, enc), "peak_mb_after_local": round(peak_mb())}
            row["milvus_lite"] = milvus(vecs, texts, qv, qt, tmp, enc)
            row["peak_mb_after_milvus"] = round(peak_mb())
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        out["sizes"][str(n)] = row
        print(json.dumps({n: row}), flush=True)
    if a.json:
        a.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
