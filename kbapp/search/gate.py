"""The gate: the one part of retrieval that can say no (seed 001, CRAG-shaped bands).

similarity < floor            -> dropped (counted)
floor <= similarity < weak    -> returned with weak_match
similarity >= weak            -> normal
Thresholds depend on the model and corpus: `kbapp eval` prints the calibration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


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
    similarities: Sequence[float | None], floor: float, weak: float, top_k: int,
    trusted: bool = False,
) -> Gated:  # fmt: skip
    """Walk the ranked candidates, keep up to top_k that pass. `trusted` (an exact symbol
    match routed to BM25) skips the floor: a literal hit is its own evidence."""
    kept: list[tuple[int, bool]] = []
    dropped = 0
    for i, sim in enumerate(similarities):
        if len(kept) >= top_k:
            break
        if trusted:
            kept.append((i, False))
            continue
        if sim is None or sim < floor:
            dropped += 1
            continue
        kept.append((i, sim < weak))
    return Gated(kept, dropped)
