"""Paired sign tests between two `kbapp eval --json F --per-query` reports of the same set,
made by two versions of kbapp (or two settings): per positive query, A's rank against B's.

    .venv/bin/python tools/compare_runs.py new.json old.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kbapp.evaluate.summary import compare


def _run(path: str) -> dict:
    report = json.loads(Path(path).read_text(encoding="utf-8"))
    rows = sorted(report["per_query"], key=lambda r: r["id"])
    return {"rows": rows, "summary": {k: report[k] for k in ("recall", "mrr", "destroyed")}}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a")
    p.add_argument("b")
    args = p.parse_args()
    a, b = _run(args.a), _run(args.b)
    if [r["id"] for r in a["rows"]] != [r["id"] for r in b["rows"]]:
        print("the two reports are not of the same queries", file=sys.stderr)
        return 2
    out = {"a": {"file": args.a, **a["summary"]}, "b": {"file": args.b, **b["summary"]},
           "a_vs_b": compare(a, b)}  # fmt: skip
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
