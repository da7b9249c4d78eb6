"""What a candidate holds of the question: rarity-weighted words, rare names, the question
word for word; function words count for nothing. A small real FTS table (the library's
tokeniser), no model."""

import pytest

from kbapp.search.evidence import quotes, weigh, weigh_candidate, why
from kbapp.store.chunks import scratch_fts
from kbapp.words import FUNCTION_WORDS

PASSAGES = [
    "The contractor budget for the kitchen is 14,200 euros, paid in three parts.",
    "Call Adaeze Okafor on 040 771 4412 about the roof tiles.",
    "How much does a boiler service cost? Much depends on the model.",
    "The boiler service is due in March.",
    "Budget meetings are held every month.",
] + [f"Filler passage number {i} about the garden and the house." for i in range(200)]


@pytest.fixture(scope="module")
def chunks():
    return scratch_fts(enumerate(PASSAGES, 1))


def test_function_words_are_never_content(chunks):
    q = weigh(chunks, "how much is the contractor budget", len(PASSAGES))
    assert set(q.weights) == {"contractor", "budget"}
    assert {"much", "many", "kind", "how", "what"} <= FUNCTION_WORDS


def test_a_passage_sharing_only_a_question_word_has_no_evidence(chunks):
    q = weigh(chunks, "how much is the contractor budget", len(PASSAGES))
    junk = weigh_candidate(q, PASSAGES[2], 0.3, None, True)  # "how much" twice, nothing else
    assert junk.coverage == 0 and not junk.keyword_evidence
    right = weigh_candidate(q, PASSAGES[0], 0.3, None, True)
    assert right.literal and right.coverage == pytest.approx(1.0)


def test_rare_words_weigh_more_than_common_ones(chunks):
    q = weigh(chunks, "Okafor garden", len(PASSAGES))
    assert q.rare == {"okafor"} and q.weights["okafor"] > 3 * q.weights["garden"]
    e = weigh_candidate(q, PASSAGES[1], 0.2, None, True)
    assert e.rare and e.matched == ("okafor",) and e.coverage > 0.75
    assert not e.literal  # "garden" is not in it


def test_every_word_with_a_rare_one_answers_but_common_words_alone_do_not(chunks):
    q = weigh(chunks, "Okafor roof tiles", len(PASSAGES))
    assert weigh_candidate(q, PASSAGES[1], 0.2, None, True).answers
    common = weigh(chunks, "house garden", len(PASSAGES))
    e = weigh_candidate(common, PASSAGES[10], 0.2, None, True)
    assert e.literal and not e.rare and not e.answers


def test_a_pasted_sentence_is_a_quotation(chunks):
    q = weigh(chunks, "paid in three parts", len(PASSAGES))
    assert quotes(q, PASSAGES[0]) and not quotes(q, PASSAGES[1])
    e = weigh_candidate(q, PASSAGES[0], 0.1, None, False)
    assert e.phrase and e.answers
    short = weigh(chunks, "three parts", len(PASSAGES))  # two words are not a quotation
    assert not quotes(short, PASSAGES[0])


def test_unknown_words_and_their_share(chunks):
    q = weigh(chunks, "Rankine cycle budget", len(PASSAGES))
    assert q.unknown == ["rankine", "cycle"] and 0.5 < q.unknown_share < 1
    assert weigh(chunks, "boiler budget", len(PASSAGES)).unknown_share == 0


def test_the_card_says_why_in_words(chunks):
    q = weigh(chunks, "Okafor roof tiles", len(PASSAGES))
    e = weigh_candidate(q, PASSAGES[1], 0.2, None, True)
    assert why(e, 0.5, False).startswith("matches \u201cokafor\u201d")
    close = weigh_candidate(q, PASSAGES[3], 0.71, 0.74, False)
    assert why(close, 0.5, False) == "closest sentence 0.74"
    loose = weigh_candidate(q, PASSAGES[4], 0.42, None, False)
    assert "loosely" in why(loose, 0.5, True)
    quoted = weigh(chunks, "paid in three parts", len(PASSAGES))
    assert (
        why(weigh_candidate(quoted, PASSAGES[0], 0.1, None, False), 0.5, False)
        == "holds your words exactly"
    )
