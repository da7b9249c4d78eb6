"""The gate: the one part of retrieval that can say no (seed 001, CRAG-shaped bands).

Per query: when no candidate reaches the floor (cosine similarity), the answer is
`no_answer` and every candidate counts as dropped.
Per result:   similarity < floor   -> dropped (counted), unless BM25 also found it
              floor <= sim < weak  -> returned with weak_match
              sim >= weak          -> normal
A result BM25 found in a query that passed the floor is kept (flagged weak when its own
similarity is low, unless it holds every content word of the query: bm25.covered):
dropping it would throw away the lexical channel's evidence, which measurably cost recall
on the public set (docs/EVALUATION.md).
Words the library never uses raise the bar for the query: a question whose content words
stand in no passage (bm25.unknown_words, a rarity-weighted share u) passes only when its
closest passage reaches floor + UNKNOWN_RAISE * u. Off-topic questions mostly name things the
library does not ("the Rankine cycle"); questions about the library mostly use its words.
Thresholds depend on the model and corpus: `kbapp eval` prints the calibration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Measured on three sets (docs/EVALUATION.md, "Words the library never uses"): at the
# self-calibrated floors, squad-public's abstain 0.70 -> 0.75 / 0.78 / 0.80 / 0.80 / 0.80 for
# 0.1 / 0.2 / 0.3 / 0.5 / 1.0, false refusal 0.021 -> 0.025 (0.037 at 1.0); debian-manuals and
# python-whatsnew unchanged up to 0.5, false refusal up at 1.0. The smallest raise on the
# plateau is kept.
UNKNOWN_RAISE = 0.3


def required_floor(floor: float, unknown_share: float) -> float:
    """What a question's closest passage must reach to be answered: the floor, raised for
    the share of the question the library never uses (bm25.unknown_words)."""
    return floor + UNKNOWN_RAISE * unknown_share


@dataclass(frozen=True)
class Gated:
    kept: list[tuple[int, bool]]  # (index into the candidates, weak_match)
    dropped: int

    @property
    def state(self) -> str:
        if not self.kept:
            return "no_answer"
        return "weak" if all(weak for _, weak in self.kept) else "ok"


def apply_gate(
    similarities: Sequence[float | None],
    floor: float,
    weak: float,
    top_k: int,
    trusted: bool = False,
    lexical: Sequence[bool] | None = None,
    covered: Sequence[bool] | None = None,
    unknown_share: float = 0.0,
    best: float | None = None,
) -> Gated:
    """Walk the ranked candidates and keep up to top_k. `trusted` (keyword search: a symbol
    routed to BM25, or BM25 asked for) skips the floor, since a literal match is its own
    evidence; the weak flag still comes from the dense similarity where there is one.
    `unknown_share`: the share of the question the library never uses, which raises what
    the best similarity must reach (required_floor); each passage is still dropped below
    the floor itself. `best`: the closest passage's similarity among all the candidates,
    where fusion ranked it out of `similarities` (default: the best of these)."""
    lexical = lexical or [False] * len(similarities)
    covered = covered or [False] * len(similarities)
    if not trusted:
        if best is None:
            best = max((s for s in similarities if s is not None), default=None)
        if best is None or best < required_floor(floor, unknown_share):
            return Gated([], min(top_k, len(similarities)))
    kept: list[tuple[int, bool]] = []
    dropped = 0
    for i, sim in enumerate(similarities):
        if len(kept) >= top_k:
            break
        low = (sim < weak if sim is not None else not trusted) and not covered[i]
        if trusted or (sim is not None and sim >= floor) or lexical[i]:
            kept.append((i, low))
        else:
            dropped += 1
    return Gated(kept, dropped)
