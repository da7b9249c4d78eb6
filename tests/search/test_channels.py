"""Router, fusion, gate and the FTS query builder: the pure parts of search."""


import pytest

from kbapp.search import bm25
from kbapp.search.evidence import Evidence
from kbapp.search.fuse import rrf
from kbapp.search.gate import apply_gate
from kbapp.search.route import looks_like_symbol, route
from kbapp.store.chunks import scratch_fts


@pytest.mark.parametrize(
    "q",
    ["handleAuthCallback", "snake_case_name", "kebab-case", "a.b.c", "src/queue", "HTTP2", "NASA"],
)
def test_symbols_go_to_bm25(q):
    assert looks_like_symbol(q)
    assert route(q, "auto", "hybrid") == "bm25"


@pytest.mark.parametrize(
    "q", ["how do webhooks get queued", "Tesla", "what is e.g. a test", "Warsaw", "A", "don't"]
)
def test_prose_goes_to_prose_mode(q):
    assert not looks_like_symbol(q)
    assert route(q, "auto", "dense") == "dense"
    assert route(q, "auto", "hybrid") == "hybrid"


def test_explicit_mode_is_never_rerouted():
    assert route("handleAuthCallback", "dense", "hybrid") == "dense"


def test_rrf_uses_ranks_and_sums_both_lists():
    fused = dict(rrf([[1, 2, 3], [3, 4]], k=60))
    assert fused[3] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[1] == pytest.approx(1 / 61)
    assert max(fused, key=fused.get) == 3  # found by both channels beats a single first place


def ev(dense, lexical=False, coverage=0.0, phrase=False, rare=False, sentence=None, words=2):
    matched = ("alpha", "beta", "gamma")[:words] if coverage else ()
    return Evidence(dense, sentence, lexical, coverage, matched, phrase, rare)


def sims(*dense):
    """Passages that share one of the question's words (a fifth of its weight)."""
    return [ev(d, coverage=0.2, words=1) for d in dense]


def test_gate_has_three_bands():
    g = apply_gate(sims(0.8, 0.45, 0.2, 0.7), floor=0.4, weak=0.5, top_k=8)
    assert g.kept == [(0, False), (1, True), (3, False)]
    assert g.dropped == 1
    assert g.state == "ok"


def test_gate_all_weak_is_weak_and_nothing_is_no_answer():
    assert apply_gate(sims(0.45, 0.42), 0.4, 0.5, 8).state == "weak"
    none = apply_gate(sims(0.1, 0.3), 0.4, 0.5, 8)
    assert none.state == "no_answer" and none.dropped == 2 and none.kept == []


def test_in_the_weak_band_similarity_alone_needs_one_of_the_questions_words():
    """ "Who was the founder of CBS?" asked of a library that never names CBS's founder:
    its closest passage is 0.44 (floor 0.40, weak 0.48) and shares no word with it. Past the
    weak threshold similarity stands alone; under it, one shared word is enough."""
    alone = apply_gate([ev(0.44), ev(0.42)], 0.4, 0.48, 8)
    assert alone.state == "no_answer" and alone.dropped == 2
    assert apply_gate([ev(0.44), ev(0.42, coverage=0.1, words=1)], 0.4, 0.48, 8).kept == [
        (1, True)]  # fmt: skip
    assert apply_gate([ev(0.49), ev(0.44)], 0.4, 0.48, 8).kept == [(0, False)]
    # a sentence past the weak mark is close in meaning by itself
    assert apply_gate([ev(0.44, sentence=0.55)], 0.4, 0.48, 8).kept == [(0, False)]


def test_a_close_sentence_lifts_a_passage_out_of_weak():
    g = apply_gate([ev(0.45, sentence=0.62)], 0.4, 0.5, 8)
    assert g.kept == [(0, False)]


def test_gate_trusts_exact_symbol_matches():
    assert apply_gate([ev(None), ev(None)], 0.4, 0.5, 8, trusted=True).state == "ok"


def test_keyword_matches_need_half_the_question():
    """Once the question is answered, a keyword hit holding one common word of four is
    dropped; one holding most of the question is shown, marked weak."""
    g = apply_gate([ev(0.7), ev(0.3, True, 0.6), ev(0.3, True, 0.25), ev(0.3)], 0.4, 0.5, 8)
    assert g.kept == [(0, False), (1, True)] and g.dropped == 2
    # half the question in one word is not enough: "48 hours" for "service hours"
    one = apply_gate([ev(0.7), ev(0.2, True, 0.55, rare=True, words=1)], 0.4, 0.5, 8)
    assert one.kept == [(0, False)] and one.dropped == 1
    # keyword matches alone never answer a question nothing is close to
    none = apply_gate([ev(0.3, True, 0.6), ev(0.2, True, 0.9)], 0.4, 0.5, 8)
    assert none.state == "no_answer" and none.dropped == 2


def test_the_question_quoted_answers_whatever_the_similarity():
    g = apply_gate([ev(0.2, True, 1.0, phrase=True), ev(0.1)], 0.4, 0.5, 8)
    assert g.state == "ok" and g.kept == [(0, False)] and g.literal


def test_all_words_answer_only_with_a_rare_one():
    """"Okafor's phone number" held whole answers; "the service is due" held whole, every
    word common, is what keyword junk looks like."""
    rare = apply_gate([ev(0.25, True, 1.0, rare=True)], 0.4, 0.5, 8)
    assert rare.state == "ok" and rare.literal
    assert apply_gate([ev(0.25, True, 1.0)], 0.4, 0.5, 8).state == "no_answer"


def test_a_close_sentence_holding_the_words_answers_a_question_in_other_words():
    """ "What happened to the things inside the lab after it was torn down?": its passage
    is 0.26 to the question, its closest sentence 0.43 and it holds "torn", "down", "lab"."""
    g = apply_gate([ev(0.26, False, 0.6, sentence=0.43), ev(0.3)], 0.4, 0.5, 8)
    assert g.state == "weak" and g.kept == [(0, True)] and g.dropped == 1
    # a close sentence without the question's words is not enough, nor the words alone
    assert apply_gate([ev(0.26, False, 0.2, sentence=0.43)], 0.4, 0.5, 8).state == "no_answer"
    assert apply_gate([ev(0.26, False, 0.6, sentence=0.35)], 0.4, 0.5, 8).state == "no_answer"
    assert apply_gate([ev(0.26, True, 0.6, sentence=0.43, words=1)], 0.4, 0.5, 8).state == (
        "no_answer")  # one word
    # the sentence must reach the floor as raised for words the library never uses; the
    # words it must hold are half of those the library knows
    raised = [ev(0.3, True, 0.3, sentence=0.45)]
    assert apply_gate(raised, 0.4, 0.5, 8, unknown_share=0.5).state == "no_answer"  # 0.55
    assert apply_gate(raised, 0.3, 0.5, 8, unknown_share=0.5).state == "weak"  # 0.45


def test_gate_stops_at_top_k():
    g = apply_gate(sims(*[0.9] * 20), 0.4, 0.5, top_k=8)
    assert len(g.kept) == 8


@pytest.fixture
def fts():
    docs = [
        "The handleAuthCallback function verifies the token.",
        "Queue workers retry failed webhook deliveries.",
        "snake_case names are common in Python code.",
        'NEAR the river AND the bridge, "quoted" words * stars.',
    ]
    return scratch_fts(enumerate(docs, 1))


@pytest.mark.parametrize(
    "q", ['"', "*", "NEAR", "AND", "a AND", "OR OR", "'; DROP TABLE chunks; --", "(x", "col:val",
          "\x00\x01", "^start", "x" * 10000, "-", "+"],
)  # fmt: skip
def test_fts_syntax_in_queries_is_just_text(fts, q):
    bm25.search(fts, q, 10)  # must not raise


def test_bm25_finds_symbols_and_stems(fts):
    assert bm25.search(fts, "handleAuthCallback", 5, phrase=True)[0][0] == 1
    assert bm25.search(fts, "snake_case", 5, phrase=True)[0][0] == 3
    assert bm25.search(fts, "retrying webhooks", 5)[0][0] == 2  # porter: retrying ~ retry


def test_bm25_scores_are_positive_and_sorted(fts):
    hits = bm25.search(fts, "webhook queue worker", 5)
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0


def test_gate_answers_when_the_closest_passage_was_ranked_out_of_the_list():
    """Fusion may rank the passage closest to the question below the candidates it keeps;
    "is anything close enough?" is still asked of that passage, with its own words."""
    ranked = [ev(0.38, True, 0.7), ev(0.36)]  # lexical matches, not close enough alone
    assert apply_gate(ranked, 0.4, 0.5, 8).state == "no_answer"
    g = apply_gate(ranked, 0.4, 0.5, 8, closest=ev(0.45, coverage=0.3, words=1))
    assert g.state != "no_answer" and g.kept == [(0, True)]
    assert apply_gate(ranked, 0.4, 0.5, 8, closest=ev(0.39, coverage=0.3)).state == "no_answer"
    # in the weak band and in none of the question's words: not close enough by itself
    assert apply_gate(ranked, 0.4, 0.5, 8, closest=ev(0.45)).state == "no_answer"
