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
Thresholds depend on the model and corpus: `kbapp eval` prints the calibration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


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
) -> Gated:
    """Walk the ranked candidates and keep up to top_k. `trusted` (keyword search: a symbol
    routed to BM25, or BM25 asked for) skips the floor, since a literal match is its own
    evidence; the weak flag still comes from the dense similarity where there is one."""
    lexical = lexical or [False] * len(similarities)
    covered = covered or [False] * len(similarities)
    if not trusted:
        best = max((s for s in similarities if s is not None), default=None)
        if best is None or best < floor:
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
