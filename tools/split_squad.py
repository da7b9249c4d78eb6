#!/usr/bin/env python3
"""Split squad-public into several development libraries of different articles, for choosing
the gate on more than one library (issue #25).

Each split holds a few articles and their questions; the questions about every other split's
articles become that split's unanswerable questions (Wikipedia questions about articles the
library does not hold: the hardest kind of off-topic, same style and vocabulary), beside the
set's own 60 negatives. Related articles (Southern California, Fresno) stay in one split, so
no question counted unanswerable is answered by a neighbour.

    tools/split_squad.py resources/eval/squad-public OUT --splits 4
    # OUT/split-1/{corpus/,golden.jsonl} ... ; then kbapp eval OUT/split-1/corpus OUT/split-1/golden.jsonl
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections import Counter
from pathlib import Path

TOGETHER = [{"Southern_California", "Fresno_California"}]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("set", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--splits", type=int, default=4)
    a = ap.parse_args()
    golden = [json.loads(x) for x in (a.set / "golden.jsonl").read_text().splitlines() if x]
    per_doc = Counter(g["doc"] for g in golden if g.get("needle"))
    docs = sorted(p.stem for p in (a.set / "corpus").glob("*.md"))
    groups: list[set[str]] = [set(t) for t in TOGETHER]
    groups += [{d} for d in docs if not any(d in t for t in TOGETHER)]
    # Largest groups first, each into the split with the fewest questions so far
    groups.sort(key=lambda g: (-sum(per_doc[d] for d in g), sorted(g)))
    splits: list[set[str]] = [set() for _ in range(a.splits)]
    for g in groups:
        min(splits, key=lambda s: (sum(per_doc[d] for d in s), len(s))).update(g)
    for n, members in enumerate(splits, 1):
        root = a.out / f"split-{n}"
        shutil.rmtree(root, ignore_errors=True)
        (root / "corpus").mkdir(parents=True)
        for d in sorted(members):
            shutil.copy(a.set / "corpus" / f"{d}.md", root / "corpus")
        rows = []
        for g in golden:
            if g.get("needle") and g["doc"] in members:
                rows.append(g)
            elif g.get("needle"):  # about an article this library does not hold
                rows.append({"id": g["id"], "query": g["query"], "needle": None})
            else:
                rows.append(g)
        (root / "golden.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        pos = sum(1 for r in rows if r.get("needle"))
        print(f"split-{n}: {len(members)} articles, {pos} answerable, {len(rows) - pos} not: "
              + ", ".join(sorted(members)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
