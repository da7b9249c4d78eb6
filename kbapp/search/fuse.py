"""Reciprocal Rank Fusion: ranks, not scores, so nothing needs calibrating."""

from __future__ import annotations

from collections.abc import Sequence


def rrf(lists: Sequence[Sequence[int]], k: int = 60) -> list[tuple[int, float]]:
    """Sum of 1 / (k + rank) over the lists (rank 1-based), best first; ties keep order."""
    acc: dict[int, float] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, start=1):
            acc[item] = acc.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(acc.items(), key=lambda kv: -kv[1])
