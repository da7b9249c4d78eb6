import pytest

from kbapp.evaluate import metrics as M


def test_wilson_matches_known_values():
    # the seed chapter's R@20 intervals on 64 queries: A [0.471, 0.705], E [0.718, 0.901]
    assert M.wilson(38, 64) == pytest.approx((0.471, 0.705), abs=5e-4)
    assert M.wilson(53, 64) == pytest.approx((0.718, 0.901), abs=5e-4)
    assert M.wilson(0, 10)[0] == 0.0 and M.wilson(10, 10)[1] == pytest.approx(1.0)
    assert M.wilson(0, 0) == (0.0, 1.0)


def test_sign_test_matches_the_seed_chapter():
    # E vs A at R@20 was +18/-3, p = 0.0015; E vs C +12/-2, p = 0.0129 (seed 000)
    assert M.sign_test(18, 3) == pytest.approx(0.0015, abs=1e-4)
    assert M.sign_test(12, 2) == pytest.approx(0.0129, abs=1e-4)
    assert M.sign_test(0, 0) == 1.0
    assert M.sign_test(5, 5) == 1.0


def test_recall_and_mrr_on_hand_made_ranks():
    ranks = [1, 3, None, 10]
    assert M.recall_at(ranks, 1) == 0.25
    assert M.recall_at(ranks, 4) == 0.5
    assert M.recall_at(ranks, 20) == 0.75
    assert M.mrr(ranks) == pytest.approx((1 + 1 / 3 + 0 + 1 / 10) / 4)


def test_hit_needs_the_whole_needle_whitespace_normalised():
    contents = ["half of the needle", "x the whole\nneedle  sentence. y"]
    assert M.first_hit_rank("the whole needle sentence.", contents) == 2
    assert M.first_hit_rank("the whole needle sentence. y z", contents) is None


def test_paired_counts_only_disagreements():
    res = M.paired([1, 1, 0, 0, 1], [1, 0, 0, 1, 0])
    assert (res["wins"], res["losses"]) == (2, 1)
    with pytest.raises(ValueError):
        M.paired([1], [1, 0])


def test_destroyed_counting(tmp_path, fake_encoder):
    """A needle split across two blind chunks is in no chunk: destroyed, and counted."""
    import json

    from kbapp.config import ChunkOptions, SearchOptions
    from kbapp.evaluate.runner import EvalConfig, _Libraries, evaluate, parse_config, summarise

    corpus = tmp_path / "c"
    corpus.mkdir()
    needle = "The lighthouse keeper counted exactly forty seven ships that night."
    text = "# Sea\n\n" + ("Waves rolled in slowly. " * 20) + needle + (" Gulls cried." * 30)
    (corpus / "sea.md").write_text(text)
    golden = [{"id": "1", "query": "how many ships did the keeper count", "needle": needle,
               "doc": "sea"}, {"id": "n", "query": "price of tea", "needle": None}]  # fmt: skip
    base = EvalConfig("base", ChunkOptions(), SearchOptions(mode="dense"))
    libs = _Libraries(corpus, None, fake_encoder)
    try:
        run = evaluate(libs, golden, base)
        good = summarise(run)
        blind = summarise(evaluate(libs, golden, parse_config("blind,target=100", base)))
    finally:
        libs.close()
    assert good["destroyed"] == 0 and good["positives"] == 1 and good["negatives"] == 1
    assert blind["destroyed"] == 1 and blind["recall"]["40"] == 0.0
    assert set(good) >= {"recall", "recall_ci", "mrr", "gate", "calibration", "latency_ms",
                         "index", "quote_chars"}  # fmt: skip
    assert json.dumps(good)  # the report is JSON-serialisable
    # per query, the decision's features, so that a miss can be read
    asked = run["rows"][0]
    assert {"required", "unknown_words", "top_sentence", "top_coverage", "quoted",
            "closest_words"} <= set(asked)  # fmt: skip
    # the question's own words that its closest passage holds (the fake encoder picks it)
    assert isinstance(asked["closest_words"], list)
    assert set(asked["closest_words"]) <= {"ships", "keeper", "count"}


def test_the_gate_is_reported_three_ways_on_the_same_queries():
    from kbapp.evaluate.summary import gate_three_ways

    pos = [0.30, 0.45, 0.50, 0.55, 0.60, 0.62, 0.65, 0.70, 0.72, 0.80] * 2
    neg = [0.20, 0.25, 0.28, 0.33, 0.36, 0.40, 0.44, 0.47]
    g = gate_three_ways(pos, neg, calibrated=0.35)
    assert g["fixed_0.42"]["false_refusal"] == 0.1 and g["fixed_0.42"]["abstain"] == 0.75
    assert g["self_calibrated"]["abstain"] == 0.5
    oracle = g["oracle_5pct"]  # the highest floor refusing at most 5% of the positives
    assert oracle["false_refusal"] <= 0.05 and oracle["floor"] == 0.3
    assert oracle["abstain_ci"][0] <= oracle["abstain"] <= oracle["abstain_ci"][1]
    assert gate_three_ways(pos, neg, None)["self_calibrated"] is None
