"""Replay the gate on dumped evidence (tools/gate_features.py), with the real apply_gate, so a
change to the decision can be read over many libraries in seconds without searching again.
Per library: answerable refused, unanswerable abstained, and the oracle single floor (the
highest that refuses at most 5% of the answerable, fitted on the same questions).

    python3 tools/gate_replay.py /tmp/dev/runs/*.feat.jsonl [--band RULE] [--halves 300]

--band: what a passage between the floor and the weak mark must hold to answer on its
similarity: "word" (kbapp's rule: one of the question's words), "any" (nothing: the gate
before round 3), "fifth" (a fifth of the question's weight), "rare-or-two", "two", "half".
--halves N: the oracle floor fitted on a random half of the answerable questions, scored
on the other half, N times (how far an oracle fitted on some real questions transfers).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kbapp.evaluate.summary import oracle_floor  # noqa: E402
from kbapp.search import gate  # noqa: E402
from kbapp.search.evidence import Evidence  # noqa: E402

BANDS = {
    "word": gate.in_the_weak_band_enough,  # kbapp's own
    "any": lambda e: True,
    "fifth": lambda e: e.coverage >= 0.2,
    "rare-or-two": lambda e: e.rare or len(e.matched) >= 2,
    "two": lambda e: len(e.matched) >= 2,
    "half": lambda e: e.keyword_evidence,
}


def evidence(c: dict) -> Evidence:
    return Evidence(c["dense"], c["sentence"], c["lexical"], c["coverage"],
                    tuple(c["matched"]), c["phrase"], c["rare"])  # fmt: skip


def refused(q: dict) -> bool:
    ev = [evidence(c) for c in q["candidates"]]
    best = q["best_dense"]
    closest = next((e for e in ev if e.dense == best), None)
    if closest is None and best is not None:  # ranked out of the candidates: no words known
        closest = Evidence(best, None, False, 0.0, (), False, False)
    g = gate.apply_gate(ev, q["floor"], q["weak"], 8, trusted=q["channel"] == "bm25",
                        unknown_share=q["unknown_share"], closest=closest)  # fmt: skip
    return g.state == "no_answer"


def top(rows: list[dict]) -> list[float]:
    return [q["best_dense"] for q in rows if q["best_dense"] is not None]


def oracle(pos: list[float], neg: list[float]) -> tuple[float, float]:
    """The oracle floor fitted on `pos` (what `kbapp eval` reports) and its abstention."""
    floor = oracle_floor(pos)
    return floor, sum(x < floor for x in neg) / len(neg)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("features", nargs="+", type=Path)
    ap.add_argument("--band", choices=sorted(BANDS), default="word")
    ap.add_argument("--halves", type=int, default=0)
    a = ap.parse_args()
    gate.in_the_weak_band_enough = BANDS[a.band]
    fails = refused_all = 0
    for path in a.features:
        qs = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        pos = [q for q in qs if q["positive"]]
        neg = [q for q in qs if not q["positive"]]
        fr = sum(refused(q) for q in pos)
        ab = sum(refused(q) for q in neg)
        floor, oab = oracle(top(pos), top(neg))
        ok = fr <= 0.05 * len(pos) and ab / len(neg) >= oab - 1e-9
        fails += not ok
        refused_all += fr
        row = {"library": path.name.split(".")[0], "floor": qs[0]["floor"],
               "refused": f"{fr}/{len(pos)}", "abstained": f"{ab}/{len(neg)}",
               "oracle_floor": floor, "oracle_abstain": round(oab, 3), "both_targets": ok}  # fmt: skip
        if a.halves:
            p, rnd, frs = top(pos), random.Random(1), []
            for _ in range(a.halves):
                rnd.shuffle(p)
                half, other = p[: len(p) // 2], p[len(p) // 2 :]
                f, _ = oracle(half, top(neg))
                frs.append(sum(x < f for x in other) / len(other))
            row["half_oracle_refuses"] = round(sum(frs) / len(frs), 3)
            row["half_oracle_over_5pct"] = round(sum(x > 0.05 for x in frs) / len(frs), 2)
        print(json.dumps(row))
    print(json.dumps({"band": a.band, "libraries": len(a.features), "failing": fails,
                      "answerable_refused": refused_all}))  # fmt: skip


if __name__ == "__main__":
    main()
