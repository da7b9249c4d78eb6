"""How hybrid search fuses its channels: scores by default, ranks (RRF) to compare."""

import pytest
from conftest import make_library

from kbapp.config import ChunkOptions, SearchOptions
from kbapp.errors import SearchError
from kbapp.evaluate.runner import EvalConfig, parse_config
from kbapp.search.fuse import rrf, score_sum

# Three passages the vectors find about equally close; BM25 finds one of them far better.
DENSE = {"c": 0.82, "b": 0.81, "a": 0.80}
BM25 = {"a": 20.0, "c": 2.0, "b": 1.9}


def test_scores_keep_the_margin_ranks_throw_away():
    order = ["c", "b", "a"]
    by_score = [i for i, _ in score_sum(order, [DENSE, BM25])]
    assert by_score[0] == "a"  # BM25's wide margin decides where the vectors nearly tie
    by_rank = [i for i, _ in rrf([sorted(DENSE, key=DENSE.get, reverse=True),
                                  sorted(BM25, key=BM25.get, reverse=True)])]  # fmt: skip
    assert by_rank[0] == "c"  # RRF sees first-and-second against third-and-first


def test_a_channel_that_found_nothing_counts_for_nothing():
    fused = dict(score_sum(["x", "y"], [{"x": 0.5, "y": 0.25}, {}, {"y": 1.0}]))
    assert fused == {"x": 1.0, "y": 1.5}  # y: half the best similarity, plus the third signal
    assert score_sum([], [{"x": 1.0}]) == []


@pytest.mark.parametrize("fusion", ["score", "rrf"])
def test_hybrid_hits_come_in_fused_order_with_their_similarity(tmp_path, fake_encoder, fusion):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pump.md").write_text("# Pump\n\nPrime the pump before use; a dry pump overheats.\n")
    (docs / "filter.md").write_text("# Filter\n\nReplace the pump filter every year.\n")
    (docs / "garden.md").write_text("# Garden\n\nWater the roses in the evening.\n")
    lib = make_library(tmp_path / "lib", fake_encoder)
    lib.index([docs])
    hits = lib.search("prime the pump", mode="hybrid", fusion=fusion,
                      min_dense=-1.0, weak_dense=-1.0).hits  # fmt: skip
    assert hits[0].path.endswith("pump.md")
    fused = [h.scores["fused"] for h in hits]
    assert fused == sorted(fused, reverse=True)
    assert all(h.scores["dense"] is not None for h in hits)
    lib.close()


def test_an_unknown_fusion_is_refused_with_the_choices():
    with pytest.raises(SearchError, match="score, rrf"):
        SearchOptions(fusion="sum")
    base = EvalConfig("base", ChunkOptions(), SearchOptions())
    assert base.search.fusion == "score"
    assert parse_config("rrf", base).search.fusion == "rrf"
    assert parse_config("fusion=rrf,rrf_k=10", base).search.rrf_k == 10
