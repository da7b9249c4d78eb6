"""Retrieval metrics with intervals: Recall@k, MRR, Wilson intervals, the exact sign test."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

KS = (1, 4, 8, 20, 40)


def normalise(text: str) -> str:
    """Whitespace-normalised text: the needle test is the same for every configuration."""
    return " ".join(text.split())


def is_hit(needle: str, content: str) -> bool:
    return normalise(needle) in normalise(content)


def first_hit_rank(needle: str, contents: Sequence[str]) -> int | None:
    """1-based rank of the first returned chunk whose content holds the needle whole."""
    n = normalise(needle)
    for rank, content in enumerate(contents, start=1):
        if n in normalise(content):
            return rank
    return None


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    if not ranks:
        return 0.0
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def mrr(ranks: Sequence[int | None], cutoff: int | None = None) -> float:
    if not ranks:
        return 0.0
    return sum(1.0 / r for r in ranks if r is not None and (cutoff is None or r <= cutoff)) / len(
        ranks
    )


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """95% Wilson score interval for a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test on the disagreeing pairs (ties dropped)."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired(a: Sequence[float], b: Sequence[float]) -> dict:
    """Wins/losses of A over B per query and the sign-test p-value."""
    if len(a) != len(b):
        raise ValueError("paired comparison needs the same queries on both sides")
    wins = sum(1 for x, y in zip(a, b, strict=True) if x > y)
    losses = sum(1 for x, y in zip(a, b, strict=True) if x < y)
    return {"wins": wins, "losses": losses, "p": sign_test(wins, losses)}


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    idx = (len(s) - 1) * q
    lo, hi = math.floor(idx), math.ceil(idx)
    return s[lo] + (s[hi] - s[lo]) * (idx - lo)


def median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None
