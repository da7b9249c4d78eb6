"""The gate on fresh indexings of the same files: int8 vectors depend a little on the batch
they were embedded in, so each indexing calibrates and answers a little differently. Per
run: the self-calibrated floor, answerable questions refused, unanswerable ones abstained
on, and what the oracle single floor (refusing at most 5% of the answerable, fitted on that
run) would abstain on. One JSON line per run.

    .venv/bin/python tools/gate_repeat.py resources/eval/squad-public --runs 7
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path


def main() -> None:
    from kbapp.config import load_settings
    from kbapp.embed import load_encoder
    from kbapp.library import Library

    ap = argparse.ArgumentParser()
    ap.add_argument("evalset", type=Path, help="a folder with corpus/ and golden.jsonl")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    rows = [json.loads(x) for x in (a.evalset / "golden.jsonl").read_text().splitlines() if x]
    for _ in range(a.runs):
        with tempfile.TemporaryDirectory() as tmp:
            lib = Library(load_settings(Path(tmp) / "lib"), load_encoder())
            lib.index([a.evalset / "corpus"])
            pos = [lib.search(r["query"]) for r in rows if r.get("needle")]
            neg = [lib.search(r["query"]) for r in rows if not r.get("needle")]
            # a question nothing matched at all (no similarity) is below every floor
            best = sorted(r.best_dense if r.best_dense is not None else -1.0 for r in pos)
            oracle = best[int(0.05 * len(pos))]
            print(json.dumps({
                "floor": lib.calibration.floor if lib.calibration else None,
                "refused": sum(r.state == "no_answer" for r in pos), "answerable": len(pos),
                "abstained": sum(r.state == "no_answer" for r in neg), "unanswerable": len(neg),
                "oracle_floor": round(oracle, 4),
                "oracle_abstained": sum(r.best_dense is None or r.best_dense < oracle for r in neg),
            }), flush=True)  # fmt: skip
            lib.close()


if __name__ == "__main__":
    main()
