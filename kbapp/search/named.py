"""Which document the question names: among look-alike documents (twenty "What's New In
Python X.Y", several years of one company's report), the candidates whose title or file
name the question's words set apart from the other candidates'."""

from __future__ import annotations

import math
import re
from pathlib import Path

from ..words import STOPWORDS, pieces, terms

NAMED = 0.5
_NAME_SEPARATORS = re.compile(r"[-_]+")


def _words(text: str) -> set[str]:
    """Content words, a compound as one word beside its parts ("4.4": "4 4", "4"; as BM25
    reads it, words.terms), and the letter and digit pieces of a word that mixes them
    ("FY2018": "fy2018", "fy", "2018"), so "FY2018" in a question meets "2018" in a title
    and "4.4" names release 4.4's notes, not every 4.x's."""
    out = set()
    for w in terms(text):
        if w not in STOPWORDS:
            out.add(w)
            parts = pieces(w)
            if len(parts) > 1:
                out.update(parts)
    return out


def title_ranked(q: str, order: list[int], rows: dict) -> dict[int, float]:
    """The candidates whose document the question names, among look-alike documents: it
    holds most of what sets that document's title (or file name) apart from the other
    candidates' ("3.9" among twenty "What's New In Python X.Y"), a share of at least NAMED
    of the title's words weighted by rarity. Each named candidate with its document's share,
    best named first, ties in the given order. A heading mistaken for a title (a long
    sentence) is never named by a few common words."""
    asked = _words(q)
    if not asked:
        return {}
    titles: dict[int, set[str]] = {}
    for i in order:
        r = rows[i]
        if r.doc_id not in titles:
            # In a file name "-" and "_" separate words: "ferrymaster-4.4" is two words
            stem = _NAME_SEPARATORS.sub(" ", Path(r.name).stem)
            titles[r.doc_id] = _words(f"{r.title or ''} {stem}")
    n = len(titles)
    df: dict[str, int] = {}
    for words in titles.values():
        for w in words:
            df[w] = df.get(w, 0) + 1
    share = {}
    for d, words in titles.items():
        total = sum(math.log(1 + n / df[w]) for w in words)
        hit = sum(math.log(1 + n / df[w]) for w in words & asked)
        # Only among look-alikes (another candidate's title shares a word): elsewhere the
        # title is one topic word ("budget.xlsx") that BM25 already weighs in the header.
        family = any(df[w] > 1 for w in words)
        share[d] = hit / total if total and family else 0.0
    named = [i for i in order if share[rows[i].doc_id] >= NAMED]
    named.sort(key=lambda i: -share[rows[i].doc_id])  # stable: the given order within
    return {i: share[rows[i].doc_id] for i in named}
