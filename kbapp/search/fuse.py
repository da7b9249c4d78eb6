"""Fusing the dense and lexical channels (and the document the question names) into one
order. Two rules: score fusion, the default, and Reciprocal Rank Fusion, kept to compare
(`kbapp eval --compare default rrf`; docs/EVALUATION.md has both on three sets)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def rrf(lists: Sequence[Sequence[int]], k: int = 60) -> list[tuple[int, float]]:
    """Sum of 1 / (k + rank) over the lists (rank 1-based), best first; ties keep order."""
    acc: dict[int, float] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, start=1):
            acc[item] = acc.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(acc.items(), key=lambda kv: -kv[1])


def score_sum(
    candidates: Sequence[int], channels: Sequence[Mapping[int, float]],
) -> list[tuple[int, float]]:  # fmt: skip
    """Each channel's score divided by its best among the candidates, summed; a candidate a
    channel did not score gets 0 there. Best first; ties keep the candidates' order.

    A convex combination with the theoretical minimum (0) and the observed maximum, which
    Bruch, Gai and Ingber ("An Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS
    2023) found better than RRF in and out of domain. Unlike ranks, scores keep how far
    apart two passages are: a passage BM25 puts first by a wide margin is not pulled level
    with one it barely found, and one just below the dense cut-off is not treated as
    unranked (its similarity is computed, see Searcher.search)."""
    acc = dict.fromkeys(candidates, 0.0)
    for scores in channels:
        top = max((scores.get(i, 0.0) for i in candidates), default=0.0)
        if top <= 0.0:
            continue
        for i in candidates:
            s = scores.get(i, 0.0)
            if s > 0.0:
                acc[i] += s / top
    return sorted(acc.items(), key=lambda kv: -kv[1])
