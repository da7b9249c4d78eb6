"""Which document the question names: among look-alike documents (twenty "What's New In
Python X.Y", several years of one company's report), the candidates whose title or file
name the question's words set apart from the other candidates'."""

from __future__ import annotations

import math
import re
from pathlib import Path

from ..words import STOPWORDS, lone_letter, pieces, terms

NAMED = 0.5
_NAME_SEPARATORS = re.compile(r"[-_]+")


def _words(text: str) -> set[str]:
    """Content words (not a lone letter), a compound as one word beside its parts ("4.4":
    "4 4", "4"; as BM25 reads it, words.terms), and the letter and digit pieces of a word
    that mixes them ("FY2018": "fy2018", "fy", "2018"), so "FY2018" in a question meets
    "2018" in a title and "4.4" names release 4.4's notes, not every 4.x's."""
    out = set()
    for w in terms(text):
        # a lone letter names nothing: "e.g." in "How to manage static files (e.g. images,
        # JavaScript, CSS)" made a sentence pasted with "e.g." name that title (django-docs)
        if w in STOPWORDS or lone_letter(w):
            continue
        out.add(w)
        parts = pieces(w)
        if len(parts) > 1:
            out.update(p for p in parts if not lone_letter(p))
    return out


def title_ranked(q: str, order: list[int], rows: dict) -> dict[int, float]:
    """The candidates whose document the question names, among look-alike documents: the
    document's title (or file name) holds most of what the question says of the candidates'
    titles ("Django 4.2 admin": "4.2" and "admin"), a share of at least NAMED of those words
    weighted by their rarity among the titles. Each named candidate with its document's
    share, best named first, ties in the given order.

    The share is of the question's title words, not of the title's own: every document of
    the release a question names is named alike, whatever else its title says, and the
    passages choose among them. (Measured as a share of the title's words, a long title
    "The Django admin site" fell below NAMED where a sibling's "Admin actions" was named:
    django-docs in docs/EVALUATION.md, document in the top 1 0.61 before, 0.84 after.)"""
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
    # What the question says of the candidates' titles: its words that some title holds
    said = {w for w in asked if w in df}
    said_weight = sum(math.log(1 + n / df[w]) for w in said)
    share = {}
    for d, words in titles.items():
        hit = sum(math.log(1 + n / df[w]) for w in words & said)
        # Only among look-alikes (another candidate's title shares a word): elsewhere the
        # title is one topic word ("budget.xlsx") that BM25 already weighs in the header.
        family = any(df[w] > 1 for w in words)
        share[d] = hit / said_weight if said_weight and family else 0.0
    named = [i for i in order if share[rows[i].doc_id] >= NAMED]
    named.sort(key=lambda i: -share[rows[i].doc_id])  # stable: the given order within
    return {i: share[rows[i].doc_id] for i in named}
