"""The gate: the one part of retrieval that can say no (seed 001, CRAG-shaped bands), deciding
from all the evidence a candidate has (search/evidence.py), not from one cosine.

Per question: answered when the closest passage reaches the floor (raised for words the
library never uses: required_floor) and is close in meaning (`similar`: past the weak
threshold, or holding one of the question's words), or when a candidate's closest sentence
reaches it and the candidate holds half the question's words the library knows (weighted
by rarity, two words or more), or when a candidate holds the question word for word, or
holds all of its words, one of them rare in this library. Otherwise `no_answer`, and every candidate counts
as dropped.
Per result:   similarity >= weak                     -> kept
              similarity >= floor, shares a word     -> kept
              found by keywords, with real evidence  -> kept (half the question's
                  rarity-weighted words, or the question verbatim; bm25 score alone is not)
              a close sentence, with the words       -> kept (what answers the question)
              anything else                          -> dropped (counted)
A kept result is a weak match unless its passage or closest sentence reaches the weak
threshold or it holds the question's words (evidence.Evidence.literal).
Thresholds depend on the model and corpus: `kbapp eval` prints the calibration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .evidence import KEYWORD_SHARE, Evidence

# Measured on three sets (docs/EVALUATION.md, "Words the library never uses"): at the
# self-calibrated floors, squad-public's abstain 0.70 -> 0.75 / 0.78 / 0.80 / 0.80 / 0.80 for
# 0.1 / 0.2 / 0.3 / 0.5 / 1.0, false refusal 0.021 -> 0.025 (0.037 at 1.0); debian-manuals and
# python-whatsnew unchanged up to 0.5, false refusal up at 1.0. The smallest raise on the
# plateau is kept.
UNKNOWN_RAISE = 0.3


def required_floor(floor: float, unknown_share: float) -> float:
    """What a question's closest passage must reach to be answered: the floor, raised for
    the share of the question the library never uses (evidence.Question.unknown_share)."""
    return floor + UNKNOWN_RAISE * unknown_share


@dataclass(frozen=True)
class Gated:
    kept: list[tuple[int, bool]]  # (index into the candidates, weak_match)
    dropped: int
    literal: bool = False  # answered by the question's own words, not by similarity

    @property
    def state(self) -> str:
        if not self.kept:
            return "no_answer"
        return "weak" if all(weak for _, weak in self.kept) else "ok"


def sentence_answers(e: Evidence, required: float, unknown_share: float) -> bool:
    """Its closest sentence is as close as the question's passage must be, and it holds at
    least half of the question's words this library knows, in two words or more: a question
    in other words than its passage ("What happened to the things inside the lab after it
    was torn down?": passage 0.26, its sentence 0.43, "torn", "down", "lab"). Measured on
    seven development libraries (docs/EVALUATION.md): false refusal down on five, abstain
    unchanged within one question."""
    return (
        e.sentence is not None
        and e.sentence >= required
        and len(e.matched) >= 2
        and e.coverage >= KEYWORD_SHARE * (1.0 - unknown_share)
    )


def similar(e: Evidence, floor: float, weak: float) -> bool:
    """Close enough in meaning to stand on its similarity: past the floor, and either past
    the weak threshold (the passage or its closest sentence) or holding at least one of the
    question's words. In the weak band a passage that shares not one word with the question
    is a neighbouring topic, not an answer: on 21 development libraries (docs/EVALUATION.md)
    such passages alone answered 36 unanswerable questions ("Who was the founder of CBS?"
    asked of a library that never names him: 0.44 under a weak mark of 0.48, no shared
    word) and 2 answerable ones, each through a passage that was not its answer."""
    if e.dense is None or e.dense < floor:
        return False
    close = max(s for s in (e.dense, e.sentence) if s is not None)
    return close >= weak or in_the_weak_band_enough(e)


def in_the_weak_band_enough(e: Evidence) -> bool:
    """What a passage between the floor and the weak mark holds beside its similarity to
    answer: one of the question's words (stricter asks, measured and not taken, are in
    tools/gate_replay.py)."""
    return bool(e.matched)


def is_weak(e: Evidence, weak: float, trusted: bool = False) -> bool:
    if e.literal:
        return False
    close = max((s for s in (e.dense, e.sentence) if s is not None), default=None)
    return close < weak if close is not None else not trusted


def apply_gate(
    evidence: Sequence[Evidence],
    floor: float,
    weak: float,
    top_k: int,
    trusted: bool = False,
    unknown_share: float = 0.0,
    closest: Evidence | None = None,
) -> Gated:
    """Walk the ranked candidates and keep up to top_k. `trusted` (keyword search: a symbol
    routed to BM25, or BM25 asked for) skips the floor, since a literal match is its own
    evidence. `closest`: the evidence of the closest passage among all the candidates, where
    fusion ranked it out of `evidence` (default: the closest of these)."""
    literal = any(e.answers for e in evidence)
    required = required_floor(floor, unknown_share)
    said = [sentence_answers(e, required, unknown_share) for e in evidence]
    if not trusted and not literal and not any(said):
        near = [*evidence, closest] if closest is not None else evidence
        if not any(similar(e, required, weak) for e in near):
            return Gated([], min(top_k, len(evidence)))
    kept: list[tuple[int, bool]] = []
    dropped = 0
    for i, e in enumerate(evidence):
        if len(kept) >= top_k:
            break
        shown = similar(e, floor, weak) or (e.lexical and e.keyword_evidence) or e.answers
        if trusted or shown or said[i]:
            kept.append((i, is_weak(e, weak, trusted)))
        else:
            dropped += 1
    return Gated(kept, dropped, literal)
