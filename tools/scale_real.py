"""A real library grown to about 100k passages with the default encoder (int8, all workers):
indexing throughput per step as the library grows, where each step's time went (stages) and
how honest its ETA was, peak memory of the process tree while
indexing and while searching, and search latency at the end with the query's embedding
included, in one warm process. Unlike tools/scale.py (copies of one corpus, hashed
vectors), every passage here is different text, so posting lists are as sparse as a real
library's.

    .venv/bin/python tools/scale_real.py CORPUS_DIR [--batches 10] [--library DIR]
    .venv/bin/python tools/scale_real.py --search-only --library DIR   # search of a kept one
    .venv/bin/python tools/scale_real.py MORE_DIR --batches 2 --library DIR  # grow a kept one

CORPUS_DIR's files are dealt round-robin (sorted by name) into --batches folders (hard links),
so every step indexes the same mix of kinds; each step is one `Library.index` run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from kbapp.evaluate import metrics as M
from kbapp.evaluate.bench import RssSampler
from kbapp.index.progress import PAGE_WORK

QUERIES = [
    "how do I read a data frame from a file", "What did Tesla invent?",
    "change the tempo marking in the middle of a piece", "list comprehension syntax",
    "standard fonts built into Acrobat Reader", "oxygen in the atmosphere",
    "how to install a package from source", "linear regression with lm",
    "beam grouping in 6/8 time", "asyncio event loop", "Black Death mortality in Europe",
    "students identification window", "unicode normalization of strings", "garbage collection",
    "print a table with borders", "dynamic marks under the staff", "what is a closure",
    "compile C code for an R package", "Apollo program landing", "regular expression groups",
]  # fmt: skip


def _search(lib) -> dict:
    """p50/p95 per mode over QUERIES x 5 in this warm process, the query's embedding
    included, and the process tree's peak memory meanwhile."""
    lib.search(QUERIES[0])  # warm: vectors loaded, caches filled
    latency = {}
    with RssSampler(tree=True, every=0.2) as searching:
        for mode in ("bm25", "dense", "hybrid"):
            ms = []
            for _ in range(5):
                for q in QUERIES:
                    r = lib.search(q, mode=mode, min_dense=-1.0, weak_dense=-1.0)
                    ms.append(r.timings_ms["total"])
            latency[mode] = {"p50_ms": round(M.percentile(ms, 0.5), 2),
                             "p95_ms": round(M.percentile(ms, 0.95), 2),
                             "queries": len(ms)}  # fmt: skip
    return {"search_with_query_embedding": latency, "peak_rss_mb_searching": searching.mb}


class EtaLog:
    """The run's own estimate of its end, sampled every `every` seconds: how honest the ETA
    that the CLI and the window show was over the run, against when it really ended."""

    def __init__(self, every: float = 15.0) -> None:
        self.every, self.samples, self.trace, self._last = every, [], [], -1e9

    def __call__(self, p) -> None:
        eta = p.eta_s
        if eta is not None and p.elapsed - self._last >= self.every:
            self._last = p.elapsed
            self.samples.append((round(p.elapsed, 1), round(p.elapsed + eta, 1), round(p.fraction, 3)))
            # what the estimate was made of: text done, scanned pages OCR'd, a scan's weight
            self.trace.append({"t": round(p.elapsed, 1), "text": round(p.work_done / max(1.0, p.work_total), 3),
                               "ocr": [round(p.ocr_done, 1), p.ocr_total],
                               "scan_weight_pages": round(p.scan_weight / PAGE_WORK, 1)})  # fmt: skip

    def report(self, actual: float) -> dict:
        """The estimated end's error as a share of the real run time, for the estimates made
        after the first tenth of the run (before that an ETA is a guess in any tool)."""
        later = [abs(end - actual) / actual for t, end, _ in self.samples if t >= 0.1 * actual]
        return {"run_s": round(actual, 1), "samples": len(self.samples),
                "median_abs_error_after_first_tenth": round(M.percentile(later, 0.5), 3) if later else None,
                "max_abs_error_after_first_tenth": round(max(later), 3) if later else None,
                "estimated_end_s_by_elapsed_s": [[t, end] for t, end, _ in self.samples],
                "trace": self.trace}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path, nargs="?")
    ap.add_argument("--search-only", action="store_true", help="measure search on --library")
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--library", type=Path, help="where to build it (default: a temp folder)")
    ap.add_argument("--eta-every", type=float, default=15.0,
                    help="sample the run's ETA this often, in seconds (a short run: 5)")
    a = ap.parse_args()

    from kbapp.config import load_settings
    from kbapp.extract import is_supported
    from kbapp.library import Library

    if a.search_only:
        lib = Library(load_settings(a.library))
        print(json.dumps({"library_chunks": lib.store.chunks.searchable_count(lib.model),
                          **_search(lib)}, indent=1))  # fmt: skip
        lib.close()
        return
    work = Path(tempfile.mkdtemp(prefix="kbscale-real-"))
    files = sorted(p for p in a.corpus.rglob("*") if p.is_file() and is_supported(p))
    batches = [work / f"batch{i:02d}" for i in range(a.batches)]
    for b in batches:
        b.mkdir()
    for n, f in enumerate(files):
        rel = "_".join(f.relative_to(a.corpus).parts)
        dest = batches[n % a.batches] / rel
        try:  # a hard link: kbapp never follows a symbolic link out of a folder
            os.link(f, dest)
        except OSError:
            shutil.copy2(f, dest)
    lib = Library(load_settings(a.library or work / "library"))
    lib.encoder  # noqa: B018 - load the model before the clock starts
    steps, total = [], lib.store.chunks.searchable_count(lib.model)  # a kept library grows on
    with RssSampler(tree=True, every=0.2) as indexing:
        for b in batches:
            t = time.perf_counter()
            eta = EtaLog(a.eta_every)
            done = lib.index([b], progress=eta)
            seconds = time.perf_counter() - t
            total += done.chunks
            steps.append({"library_chunks": total, "new_chunks": done.chunks,
                          "documents": done.indexed, "failed": done.failed,
                          "seconds": round(seconds, 1),
                          "chunks_per_s": round(done.chunks / seconds, 1),
                          "peak_rss_mb_so_far": round(indexing.peak / 2**20, 1),
                          "stages_s": {k: round(v, 1) for k, v in done.stages.items()},
                          "workers": done.workers, "time": done.time_spent(),
                          "eta": eta.report(done.elapsed)})  # fmt: skip
            print(json.dumps(steps[-1]), flush=True)
    search = _search(lib)
    db = (a.library or work / "library") / "library.db"
    print(json.dumps({
        "steps": steps, "files": len(files),
        **search, "peak_rss_mb_indexing": indexing.mb,
        "database_mb": round(db.stat().st_size / 2**20, 1), "model": lib.model,
    }, indent=1))  # fmt: skip
    lib.close()


if __name__ == "__main__":
    main()
