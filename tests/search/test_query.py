"""What a query asks beyond its words, as people type it: "an exact phrase" and -words to
leave out; text pasted with command-line flags is searched as it stands. No model."""

import pytest

from kbapp.search.query import parse_query


@pytest.mark.parametrize("query, excluded", [
    ("heat pump -boiler", {"boiler"}),
    ("heat pump -boiler.", {"boiler"}),
    ('the "chemical element" oxygen -Priestley', {"priestley"}),
    ("start the interpreter with the -B switch", set()),  # a one-letter flag
    ("python3 -m module-name is faster", set()),
    ("-rw-r--r-- monty 902 annotations.txt", set()),  # a listing
    ("COVID-19 cases in e-mail", set()),
    ("-Wall and -Werror", {"werror"}),  # the first word is never left out
    # a dash typed as a hyphen: nobody leaves out every passage that says "the"
    ("the 4th league (5th tier in Poland) -the bottom professional league", set()),
    ("heat pump -the -boiler", {"boiler"}),
])  # fmt: skip
def test_a_word_is_left_out_only_when_it_reads_as_one(query, excluded):
    parsed = parse_query(query)
    assert set(parsed.excluded) == excluded
    for word in excluded:
        assert word not in parsed.text.lower()


def test_pasted_flags_stay_in_what_is_searched():
    parsed = parse_query("Running IDLE with the -n flag is deprecated")
    assert not parsed.narrowed and "-n flag" in parsed.text
