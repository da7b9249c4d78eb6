"""Every candidate's evidence per question, for reading the gate's decisions offline: one
JSON line per question with the library's floor and weak threshold, the question's unknown
share, and per candidate its passage and sentence similarity, coverage, matched words,
phrase, rare, keyword channel and whether it holds the needle. Run on a library that
`kbapp --library LIB eval` has indexed:

    .venv/bin/python tools/gate_features.py LIB GOLDEN.jsonl OUT.jsonl
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path


def main() -> None:
    from kbapp.config import load_settings
    from kbapp.embed import load_encoder
    from kbapp.evaluate import metrics as M
    from kbapp.library import Library

    ap = argparse.ArgumentParser()
    ap.add_argument("library")
    ap.add_argument("golden", type=Path)
    ap.add_argument("out", type=Path)
    a = ap.parse_args()
    golden = [json.loads(x) for x in a.golden.read_text().splitlines() if x.strip()]
    lib = Library(load_settings(a.library), load_encoder())
    opts, source = lib.gate_options(lib.search_defaults)
    probe = replace(opts, top_k=opts.candidates, min_dense=-1.0, weak_dense=-1.0, explain=True)
    with a.out.open("w") as f:
        for g in golden:
            r = lib.search(g["query"], probe)
            needle = g.get("needle")
            cands = []
            for h, e in zip(r.hits, r.evidence or [], strict=False):
                cands.append({
                    "dense": e.dense, "sentence": e.sentence, "lexical": e.lexical,
                    "coverage": round(e.coverage, 4), "matched": list(e.matched),
                    "phrase": e.phrase, "rare": e.rare,
                    "hit": bool(needle) and M.is_hit(needle, h.content),
                })  # fmt: skip
            f.write(json.dumps({
                "id": g["id"], "query": g["query"], "positive": needle is not None,
                "floor": opts.min_dense, "weak": opts.weak_dense, "source": source,
                "unknown_share": r.unknown_share, "unknown": r.unknown_words,
                "best_dense": r.best_dense, "channel": r.channel, "candidates": cands,
            }) + "\n")  # fmt: skip
    lib.close()


if __name__ == "__main__":
    main()
