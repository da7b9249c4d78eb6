"""What is in the library is found: sentences, list items and rare words sampled from an
indexed library's own passages, asked as a new user asks them (pasted as they stand), and
whether the search answers with the passage that holds them in its top 3.

    python -m kbapp.evaluate.verbatim LIBRARY [--sentences N] [--words N] [--json FILE]

A sentence is a line or sentence of a passage of 4 to 30 words; a rare word is a word of
letters (a name) or of letters and digits ("77-4412" counts by its pieces) held by at most
two passages. A probe is found when a kept result in the top 3 holds it (whitespace- and
case-folded, as the evaluation's needles).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from dataclasses import dataclass

from ..search import bm25
from ..words import FUNCTION_WORDS, words
from . import metrics as M

TOP = 3
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")


@dataclass(frozen=True)
class Probe:
    query: str
    kind: str  # "sentence" | "word"
    chunk: int  # the passage it was taken from


def sentences_of(content: str) -> list[str]:
    """A passage's lines and sentences of 4-30 words, list markers taken off."""
    out = []
    for part in _SPLIT.split(content):
        part = _BULLET.sub("", part).strip()
        if 4 <= len(words(part)) <= 30 and any(c.isalpha() for c in part):
            out.append(part)
    return out


def sample(lib, sentences: int = 100, rare_words: int = 100, seed: int = 0) -> list[Probe]:
    """Probes spread over the library: a random passage, a random sentence of it; a random
    passage, a random word of it that at most two passages hold."""
    rng = random.Random(seed)
    ids = lib.store.chunks.searchable_ids(lib.model, by_document=True)
    if not ids:
        return []
    probes: list[Probe] = []
    seen: set[str] = set()
    tries = 0
    while sum(p.kind == "sentence" for p in probes) < sentences and tries < sentences * 20:
        tries += 1
        cid = rng.choice(ids)
        row = lib.store.chunks.rows([cid], lib.model).get(cid)
        options = sentences_of(row.content) if row else []
        if options:
            s = rng.choice(options)
            if s.lower() not in seen:
                seen.add(s.lower())
                probes.append(Probe(s, "sentence", cid))
    tries = 0
    while sum(p.kind == "word" for p in probes) < rare_words and tries < rare_words * 20:
        tries += 1
        cid = rng.choice(ids)
        row = lib.store.chunks.rows([cid], lib.model).get(cid)
        if row is None:
            continue
        found = [w for w in re.findall(r"[^\W_]+(?:-[^\W_]+)*", row.content)
                 if len(w) >= 4 and w.lower() not in FUNCTION_WORDS
                 and any(c.isalpha() for c in w) and w.lower() not in seen]  # fmt: skip
        rng.shuffle(found)
        for w in found[:8]:
            if all(0 < bm25.held(lib.store.chunks, t) <= 2 for t in words(w)):
                seen.add(w.lower())
                probes.append(Probe(w, "word", cid))
                break
    return probes


def run(lib, probes: list[Probe]) -> dict:
    rows = []
    for p in probes:
        r = lib.search(p.query)
        rank = next((i for i, h in enumerate(r.hits[:TOP], 1) if M.is_hit(p.query, h.content)), None)
        rows.append({"query": p.query, "kind": p.kind, "state": r.state, "rank": rank,
                     "literal": r.literal, "best": r.best_dense})  # fmt: skip
    out: dict = {"probes": len(rows)}
    for kind in ("sentence", "word"):
        mine = [x for x in rows if x["kind"] == kind]
        if not mine:
            continue
        n = len(mine)
        out[kind] = {
            "n": n,
            "refused": round(sum(x["state"] == "no_answer" for x in mine) / n, 4),
            "weak": round(sum(x["state"] == "weak" for x in mine) / n, 4),
            "top3": round(sum(x["rank"] is not None for x in mine) / n, 4),
            "misses": [x for x in mine if x["rank"] is None][:20],
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kbapp.evaluate.verbatim", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("library")
    ap.add_argument("--sentences", type=int, default=100)
    ap.add_argument("--words", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the report, with every miss, to this file")
    a = ap.parse_args(argv)
    from ..library import Library

    lib = Library.open(a.library, create=False)
    try:
        report = run(lib, sample(lib, a.sentences, a.words, a.seed))
    finally:
        lib.close()
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, ensure_ascii=False)
    brief = {k: ({kk: vv for kk, vv in v.items() if kk != "misses"} if isinstance(v, dict) else v)
             for k, v in report.items()}  # fmt: skip
    print(json.dumps(brief))
    return 0


if __name__ == "__main__":
    sys.exit(main())
