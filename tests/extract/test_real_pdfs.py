"""Chunking real PDFs: the R manuals from Debian's r-doc-pdf package (installed by `make`).

Texinfo PDFs have everything that used to spoil passages: an outline whose headings also
occur inside sentences, section numbers beside headings, running heads that carry the page
number, bare page numbers, a table of contents and an index with dot leaders.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kbapp.chunk import chunk_document, thin
from kbapp.extract import extract
from kbapp.extract.base import SKIP_KINDS

MANUALS = Path("/usr/share/R/doc/manual")
FOUR = ["R-intro.pdf", "R-data.pdf", "R-admin.pdf", "R-lang.pdf"]
# ". There is" at a passage's start: the end of the previous sentence, cut off.
_ENDS_PREVIOUS = re.compile(r"[.!?](?:\s|$)(?!\.)")


@pytest.fixture(scope="module", params=FOUR)
def manual(request):
    path = MANUALS / request.param
    assert path.exists(), f"{path} is missing: `make test` installs Debian's r-doc-pdf"
    ex = extract(path)
    return path.name, ex, chunk_document(ex)


def test_every_character_is_in_a_passage_or_a_recorded_skip(manual):
    name, ex, chunked = manual
    covered = bytearray(len(ex.text))
    for c in chunked.chunks:
        covered[c.char_from : c.char_to] = b"\1" * (c.char_to - c.char_from)
    for h in ex.headings:
        covered[h.at : h.end] = b"\1" * (h.end - h.at)
    for a, b, kind in ex.skip:
        assert kind in SKIP_KINDS
        covered[a:b] = b"\1" * (b - a)
    lost = [i for i, ch in enumerate(ex.text) if not covered[i] and not ch.isspace()]
    assert not lost, f"{name}: text in no passage and no skip: {ex.text[lost[0]:lost[0] + 60]!r}"


def test_headings_stand_alone_never_inside_a_sentence(manual):
    name, ex, _ = manual
    for h in ex.headings:
        if h.end == h.at:
            continue  # an outline entry not found on its page marks the page's start
        before, after = ex.text[max(0, h.at - 2) : h.at], ex.text[h.end : h.end + 2]
        assert h.at == 0 or before == "\n\n", f"{name}: {h.title!r} inside text"
        assert after in ("\n\n", ""), f"{name}: {h.title!r} followed by text"


def test_no_passage_is_a_page_number_section_number_or_contents_line(manual):
    name, _, chunked = manual
    thin_ones = [c.content for c in chunked.chunks if thin(c.content)]
    assert not thin_ones, f"{name}: {thin_ones[:5]}"
    leaders = [c.content for c in chunked.chunks if re.search(r"(?:\. ){6,}\S*\d", c.content)]
    assert not leaders, f"{name}: contents lines in passages: {leaders[:3]}"
    cut = [c.content[:40] for c in chunked.chunks if _ENDS_PREVIOUS.match(c.content)]
    assert not cut, f"{name}: passages that start with the end of a sentence: {cut}"


def test_the_read_table_sentence_stays_whole():
    ex = extract(MANUALS / "R-intro.pdf")
    chunks = chunk_document(ex).chunks
    hit = [c for c in chunks if "an entire data frame can be read directly with" in c.content]
    assert hit and "read directly with the read.table() function." in hit[0].content
    pref = extract(MANUALS / "R-admin.pdf")
    assert not any(c.content.startswith(("ferences", "references")) for c in chunk_document(pref).chunks)


def test_running_heads_and_page_numbers_are_recorded_not_indexed():
    ex = extract(MANUALS / "R-intro.pdf")
    kinds = {k for _, _, k in ex.skip}
    assert {"running head", "page number", "contents"} <= kinds
    heads = [ex.text[a:b] for a, b, k in ex.skip if k == "running head"]
    assert any(h.startswith("Chapter 6: Lists and data frames") for h in heads)
    for c in chunk_document(ex).chunks:
        assert not re.search(r"Chapter \d+: [^\n]* \d+\n", c.content), c.content[:80]
