"""Does anything grow with the library's size? Index the public articles again and again
(each copy numbered, so every passage is new) into one library up to --chunks passages,
and print JSON: the storage side's throughput (extract + chunk + FTS + vectors + commit)
for each step as the library grows, then search latency at the final size.

    .venv/bin/python tools/scale.py [--chunks 100000] [--step 10000]

Embedding uses the hashed encoder at the real model's 384 dimensions: its cost per passage
is the same at any library size (measured apart by `kbapp bench`), so what is timed here is
everything that could grow with the library. Search latency at the end is BM25 + ANN +
joining rows, per mode, without the query's embedding (4.9 ms p50 in `kbapp bench`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "resources" / "eval" / "squad-public" / "corpus"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--step", type=int, default=10_000)
    ap.add_argument("--keep", action="store_true", help="keep the library (its path is printed)")
    a = ap.parse_args()

    from kbapp.config import load_settings
    from kbapp.embed.hashed import HashedEncoder
    from kbapp.library import Library

    class Encoder384(HashedEncoder):
        name, dims = "hash-384", 384

    work = Path(tempfile.mkdtemp(prefix="kbscale-"))
    lib = Library(load_settings(work / "library"), Encoder384())
    articles = sorted(CORPUS.glob("*.md"))
    steps, copy = [], 0
    total = 0
    while total < a.chunks:
        folder = work / f"batch{len(steps):03d}"
        folder.mkdir()
        goal = min(a.step, a.chunks - total)
        made = 0
        while made < goal:  # ~1,850 passages per copy of the 20 articles
            copy += 1
            for art in articles:
                text = art.read_text(encoding="utf-8")
                (folder / f"{art.stem}-{copy}.md").write_text(
                    text.replace("\n\n", f" (copy {copy}).\n\n"), encoding="utf-8")
            made += 1850
        t = time.perf_counter()
        done = lib.index([folder])
        seconds = time.perf_counter() - t
        total += done.chunks
        steps.append({"library_chunks": total, "new_chunks": done.chunks,
                      "seconds": round(seconds, 1),
                      "chunks_per_s": round(done.chunks / seconds, 1)})  # fmt: skip
        print(json.dumps(steps[-1]), flush=True)
    queries = ["when was the pump replaced", "What did Tesla invent?", "oxygen in the atmosphere",
               "Black Death mortality in Europe", "Apollo 11 landing date", "handleAuthCallback"]
    latency = {}
    for mode in ("bm25", "dense", "hybrid"):
        ms = []
        for _ in range(5):
            for q in queries:
                r = lib.search(q, mode=mode, min_dense=-1.0, weak_dense=-1.0)
                ms.append(r.timings_ms["total"] - r.timings_ms.get("embed", 0.0))
        ms.sort()
        latency[mode] = {"p50_ms": round(statistics.median(ms), 2),
                         "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2)}  # fmt: skip
    db = work / "library" / "library.db"
    print(json.dumps({"steps": steps, "search_without_query_embedding": latency,
                      "database_mb": round(db.stat().st_size / 2**20, 1)}, indent=1))  # fmt: skip
    lib.close()
    if a.keep:
        print(f"library kept at {work / 'library'}")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
