"""What a candidate shows for itself beside its similarity: the question's words it holds,
weighed by how rare each is in this library, and whether it holds the question word for word.

The gate answers from this as well as from the closest passage's cosine: a sentence pasted
from a document, or a name that stands in one passage, is in the library whatever its
similarity says, and a passage that shares one common word with the question is not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..words import FUNCTION_WORDS, stem
from ..words import words as _words
from . import bm25

FULL = 0.999  # holds every content word of the question (weights are floats)
# A candidate found by the keyword channel alone is shown only when it holds at least this
# share of the question's rarity-weighted content words, in two words or more: one common
# word of four is noise.
KEYWORD_SHARE = 0.5
# A word is rare when it stands in at most this share of the passages (and never fewer than
# RARE_MIN passages count as rare: in a small library every word stands in a few).
RARE_SHARE, RARE_MIN = 0.01, 2
PHRASE_MIN = 4  # a question of this many words or more, held word for word, is a quotation


@dataclass(frozen=True)
class Question:
    """The question's words as this library knows them."""

    tokens: tuple[str, ...]  # every word, in order (the verbatim check)
    weights: dict[str, float]  # content word -> idf in this library
    held: dict[str, int]  # content word -> passages holding it (up to bm25.DF_CAP)
    rare: frozenset[str]

    def share(self, words) -> float:
        """The rarity-weighted share of the question's content words among `words`."""
        total = sum(self.weights.values())
        return sum(v for w, v in self.weights.items() if w in words) / total if total else 0.0

    @property
    def unknown(self) -> list[str]:
        return [w for w, n in self.held.items() if n == 0]

    @property
    def unknown_share(self) -> float:
        """The rarity-weighted share of the question the library never uses: "In the
        Rankine cycle, what does water turn into?" asked of a library that never says
        "Rankine" is about 0.5; a question in the library's own words is 0."""
        return self.share(self.unknown)


def content_words(query: str) -> list[str]:
    return list(dict.fromkeys(t for t in bm25.tokens(query) if t not in FUNCTION_WORDS))


def weigh(chunks, query: str, size: int) -> Question:
    """Each content word's passage count and idf (log(1 + passages / (holding + 0.5)))."""
    words = content_words(query) if size > 0 else []
    held = {w: bm25.held(chunks, w) for w in words}
    weights = {w: math.log(1 + size / (n + 0.5)) for w, n in held.items()}
    limit = max(RARE_MIN, RARE_SHARE * size)
    rare = frozenset(w for w, n in held.items() if 0 < n <= limit)
    return Question(tuple(bm25.tokens(query)), weights, held, rare)


@dataclass(frozen=True)
class Evidence:
    """One candidate's case for being shown."""

    dense: float | None  # the passage's cosine similarity to the question
    sentence: float | None  # its closest sentence's
    lexical: bool  # the keyword channel found it
    coverage: float  # rarity-weighted share of the question's content words it holds
    matched: tuple[str, ...]  # those words, rarest first
    phrase: bool  # holds the question word for word
    rare: bool  # holds a word of the question that is rare in this library

    @property
    def literal(self) -> bool:
        """The question's words stand in it: every content word, or the whole question."""
        return self.phrase or (self.coverage >= FULL and bool(self.matched))

    @property
    def answers(self) -> bool:
        """Enough to answer a question nothing is close to in meaning: the question quoted,
        or all its words held, one of them rare here ("Okafor", "77-4412")."""
        return self.phrase or (self.literal and self.rare)

    @property
    def keyword_evidence(self) -> bool:
        """Enough for a keyword match to be shown beside answers: the question's words, or
        at least half of their weight in two words or more (one shared word, however rare,
        is how "48 hours" in a history article turns up for "service hours")."""
        return self.literal or (self.coverage >= KEYWORD_SHARE and len(self.matched) >= 2)


def weigh_candidate(
    q: Question, content: str, dense: float | None, sentence: float | None, lexical: bool,
) -> Evidence:  # fmt: skip
    toks = _words(content)
    stems = {stem(t) for t in toks}
    matched = [w for w in q.weights if stem(w) in stems]
    coverage = q.share(matched)
    phrase = bool(matched) and _quotes(q, toks)
    matched.sort(key=lambda w: -q.weights[w])
    return Evidence(dense, sentence, lexical, coverage, tuple(matched), phrase,
                    any(w in q.rare for w in matched))  # fmt: skip


def quotes(q: Question, content: str) -> bool:
    """The passage holds the question word for word (a pasted sentence or list item)."""
    return _quotes(q, _words(content))


def _quotes(q: Question, toks: list[str]) -> bool:
    seq, n = list(q.tokens), len(q.tokens)
    if n < PHRASE_MIN or not q.weights:
        return False
    return any(toks[i : i + n] == seq for i, t in enumerate(toks) if t == seq[0])


def why(e: Evidence, weak: float, is_weak: bool) -> str:
    """In words, why a result is shown (the card's line)."""
    said = ", ".join(f"\u201c{w}\u201d" for w in e.matched[:3])
    if e.phrase:
        return "holds your words exactly"
    if e.literal and (e.rare or e.dense is None or e.dense < weak):
        return f"matches {said}"
    sims = [(s, label) for s, label in ((e.sentence, "closest sentence"),
                                        (e.dense, "similar in meaning")) if s is not None]  # fmt: skip
    best, label = max(sims, default=(None, ""))
    if is_weak:
        if best is None:
            return f"shares {said} with the question" if said else "a keyword match"
        return f"only loosely related (similarity {best:.2f})" + (
            f"; shares {said}" if said else ""
        )
    if best is not None and best >= weak:
        return f"{label} {best:.2f}"
    return f"shares {said} with the question" if said else f"{label} {best:.2f}"
