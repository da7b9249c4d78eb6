"""One tokenizer: the words the window bolds are the words the search matched."""

from kbapp.words import marks, words


def test_marks_follow_the_search_rule_not_substrings():
    text = "Boilers are serviced; the boil-water notice is lifted. Boiler service due in May."
    spans = [text[a:b] for a, b in marks(text, ["service", "boiler"])]
    assert spans == ["Boilers", "Boiler", "service"]  # "boil" is not "boiler"
    assert marks(text, []) == []


def test_marks_find_folded_words_at_their_own_offsets():
    text = "The ﬁlled form and the Ｏｋａｆｏｒ file."  # a ligature and full-width letters
    spans = marks(text, ["filled", "okafor"])
    assert [text[a:b] for a, b in spans] == ["ﬁlled", "Ｏｋａｆｏｒ"]
    assert [words(text[a:b])[0] for a, b in spans] == ["filled", "okafor"]


def test_a_card_bolds_what_the_search_matched(library, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "plan.md").write_text(
        "# Plan\n\nBudget for the contractor is capped at 18,000 euros. The budgets of other "
        "teams are not part of this plan, and the contractor reports monthly.\n"
    )
    library.index([docs])
    result = library.search("how much is the contractor budget")
    hit = next(h for h in result.hits if h.name == "plan.md")
    assert set(hit.matched) == {"contractor", "budget"}  # "much" and "the" are not evidence
    from kbapp.gui.search_pane import emphasise

    card = emphasise(" ".join(hit.content.split()), hit.matched)
    assert "<b>Budget</b>" in card and "<b>budgets</b>" in card
    assert card.count("<b>contractor</b>") == 2
    assert "<b>the</b>" not in card and "<b>much</b>" not in card


def test_an_abbreviation_is_not_a_phrase():
    """ "e.g." is lone letters joined by a dot, not a compound to ask for side by side; a
    compound of a word and a number still is."""
    from kbapp.words import lone_letter, terms

    assert "e g" not in terms("It can be used as a context manager, e.g.")
    assert lone_letter("e") and not lone_letter("7") and not lone_letter("猫")  # a CJK word
    assert "covid 19" in terms("COVID-19 cases") and "3 9" in terms("Python 3.9")
