"""The gate three ways on one corpus: the library's self-calibrated floor, the old fixed
0.42, and the oracle (the best single floor for this set, fitted on the set itself).

    .venv/bin/python tools/calibration.py CORPUS GOLDEN.jsonl [LIBRARY_DIR]

Prints JSON: abstain on unanswerable and false refusal on answerable, with Wilson 95%
intervals, for each floor. Positive rows have a "needle"; negative rows have none.
"""

import json
import sys
import tempfile
from pathlib import Path


def main() -> None:
    from kbapp.calibrate import calibrate
    from kbapp.config import load_settings
    from kbapp.evaluate import metrics as M
    from kbapp.evaluate.runner import load_golden
    from kbapp.library import Library

    corpus, golden = Path(sys.argv[1]), load_golden(Path(sys.argv[2]))
    root = Path(sys.argv[3]) if len(sys.argv) > 3 else Path(tempfile.mkdtemp(prefix="kbcal-"))
    lib = Library(load_settings(root))
    lib.index([corpus])
    cal = calibrate(lib)
    pos, neg = [], []
    for g in golden:
        best = lib.search(g["query"], mode="dense", min_dense=-1.0, weak_dense=-1.0).best_dense
        (pos if g.get("needle") else neg).append(best if best is not None else 0.0)

    def rates(floor: float) -> dict:
        fr = sum(1 for x in pos if x < floor)
        ab = sum(1 for x in neg if x < floor)
        return {
            "floor": round(floor, 4),
            "false_refusal": round(fr / len(pos), 4) if pos else None,
            "false_refusal_ci": [round(x, 3) for x in M.wilson(fr, len(pos))],
            "abstain": round(ab / len(neg), 4) if neg else None,
            "abstain_ci": [round(x, 3) for x in M.wilson(ab, len(neg))],
        }

    grid = [i / 1000 for i in range(150, 701)]
    ok = [f for f in grid if sum(1 for x in pos if x < f) <= 0.05 * len(pos)]
    oracle = max(ok) if ok else grid[0]
    print(json.dumps({
        "corpus": str(corpus), "positives": len(pos), "negatives": len(neg),
        "calibration": json.loads(cal.to_json()) if cal else None,
        "self_calibrated": rates(cal.floor) if cal else None,
        "fixed_0.42": rates(0.42),
        "oracle_at_5pct": rates(oracle),
    }, indent=1))
    lib.close()


if __name__ == "__main__":
    main()
