from pathlib import Path

import pytest
from conftest import SQUAD, FakeEncoder
from hypothesis import given, settings
from hypothesis import strategies as st

from kbapp.chunk import chunk_document, sentence_spans, thin
from kbapp.config import ChunkOptions
from kbapp.extract import extract
from kbapp.extract.base import RUNNING_HEAD, Extracted, Page


def sentences(text: str) -> list[str]:
    return [text[a:b].strip() for a, b in sentence_spans(text, 0, len(text))]


@pytest.mark.parametrize(
    "text",
    [
        "Use read.table to load it. Then fit the model.",
        "Pi is about 3.14 in most books. Nobody argues.",
        "Install v2.0 first. It fixes the bug.",
        "See https://example.org/a.b/c.html for more. The rest is below.",
        "The file lives in /usr/lib/x.so today. Move it.",
        "Some tools, e.g. grep, read lines. Others do not.",
        "Dr. Smith met Mr. Jones in St. Louis. They talked.",
        "J. R. R. Tolkien wrote it. People read it.",
    ],
)
def test_sentence_boundaries_never_inside_tokens(text):
    parts = sentences(text)
    assert len(parts) == 2, parts
    assert "".join(parts).replace(" ", "") == text.replace(" ", "")


def test_terminal_punctuation_then_capital_is_a_boundary():
    assert sentences("It rained! We stayed in? Yes. 1999 was dry.") == [
        "It rained!", "We stayed in?", "Yes.", "1999 was dry.",
    ]  # fmt: skip


def doc(text: str, headings=(), title="Doc") -> Extracted:
    return Extracted(text=text, title=title, kind="markdown", headings=list(headings))


def test_paragraphs_are_packed_whole_and_never_cut():
    paras = [f"Paragraph {i} says something about topic {i}." for i in range(30)]
    text = "\n\n".join(paras)
    res = chunk_document(doc(text), ChunkOptions(target=200))
    assert len(res.chunks) > 1
    for c in res.chunks:
        assert text[c.char_from : c.char_to] == c.content
        assert len(c.content) <= 200
        for piece in c.content.split("\n\n"):
            assert piece in paras  # whole paragraphs only


def test_long_paragraph_is_cut_only_at_sentences():
    sents = [f"Sentence number {i} is here with e.g. some words." for i in range(40)]
    text = " ".join(sents)
    res = chunk_document(doc(text), ChunkOptions(target=300))
    assert len(res.chunks) > 3
    for c in res.chunks:
        assert c.content.startswith("Sentence number") and c.content.endswith("words.")


def test_sections_header_goes_into_text_not_content():
    text = (
        "# Guide\n\nIntro words here.\n\n## Install\n\nRun the installer.\n\n### Linux\n\nUse apt."
    )
    from kbapp.extract.text import markdown_headings

    ex = doc(text, markdown_headings(text), title="Guide")
    res = chunk_document(ex)
    by_content = {c.content: c for c in res.chunks}
    assert by_content["Run the installer."].text == "[Guide > Install]\nRun the installer."
    assert by_content["Use apt."].section == "Install > Linux"
    assert by_content["Intro words here."].text == "[Guide]\nIntro words here."
    assert all("#" not in c.content for c in res.chunks)  # heading lines are not content


def test_running_header_ranges_are_skipped_but_offsets_hold():
    text = "ACME REPORT\n\nFirst real paragraph.\n\nACME REPORT\n\nSecond real paragraph."
    at = text.index("ACME REPORT", 5)
    skip = [(0, 11, RUNNING_HEAD), (at, at + 11, RUNNING_HEAD)]
    ex = Extracted(text=text, title="R", kind="pdf", skip=skip)
    res = chunk_document(ex)
    assert all("ACME" not in c.content for c in res.chunks)
    assert all(text[c.char_from : c.char_to] == c.content for c in res.chunks)


def test_window_overflow_is_split_and_counted():
    enc = FakeEncoder()
    text = " ".join(f"word{i}" for i in range(600)) + "."
    res = chunk_document(doc(text), ChunkOptions(target=100000), enc.count_tokens, 256)
    assert res.split_for_window >= 2
    assert all(enc.count_tokens(c.text) <= 256 for c in res.chunks)
    assert "".join(c.content.replace(" ", "") for c in res.chunks) == text.replace(" ", "")


def test_overlap_repeats_the_tail_of_the_previous_chunk():
    text = "\n\n".join(f"Para {i} has a handful of words in it." for i in range(20))
    plain = chunk_document(doc(text), ChunkOptions(target=120))
    over = chunk_document(doc(text), ChunkOptions(target=120, overlap=30))
    assert len(plain.chunks) == len(over.chunks)
    assert over.chunks[1].char_from < plain.chunks[1].char_from
    assert all(text[c.char_from : c.char_to] == c.content for c in over.chunks)


def test_overlap_never_pushes_a_passage_past_the_encoder_window():
    enc = FakeEncoder()
    # Each paragraph nearly fills a 64-token window; 200 characters of overlap would not fit.
    text = "\n\n".join(" ".join(f"w{i}x{j}" for j in range(58)) + "." for i in range(6))
    res = chunk_document(doc(text), ChunkOptions(target=400, overlap=200), enc.count_tokens, 64)
    assert len(res.chunks) >= 6
    assert all(enc.count_tokens(c.text) <= 64 for c in res.chunks)
    assert any(c.char_from < text.index(f"w{c.seq}x0") for c in res.chunks[1:])  # some overlap


def test_a_bare_number_or_two_words_join_a_neighbour_instead_of_standing_alone():
    body = "The gearbox needs fresh oil every spring before the boat goes back in the water."
    text = f"14\n\n{body}\n\nPenguin, London."
    # a page break after each paragraph: packing alone would keep all three apart
    pages = [Page(1, 0, 2), Page(2, 4, 4 + len(body)), Page(3, 6 + len(body), len(text))]
    ex = Extracted(text=text, title="Doc", kind="pdf", pages=pages)
    chunks = chunk_document(ex, ChunkOptions(target=60)).chunks
    assert not any(thin(c.content) for c in chunks)
    assert "".join("".join(c.content for c in chunks).split()) == "".join(text.split())
    assert all(text[c.char_from : c.char_to] == c.content for c in chunks)


def test_a_thin_section_alone_is_kept_rather_than_lost():
    from kbapp.extract.text import markdown_headings

    text = "# Title\n\nSee also."
    ex = Extracted(text=text, title="Title", kind="markdown", headings=markdown_headings(text))
    assert [c.content for c in chunk_document(ex).chunks] == ["See also."]


def test_blind_cutting_destroys_what_boundaries_keep():
    needle = "The quick brown fox jumps over the lazy dog near the river bank today."
    text = ("Filler sentence goes here. " * 18) + needle + (" More filler follows." * 20)
    blind = chunk_document(doc(text), ChunkOptions(target=512, blind=True))
    smart = chunk_document(doc(text), ChunkOptions(target=512))
    assert not any(needle in c.content for c in blind.chunks)
    assert any(needle in c.content for c in smart.chunks)


def test_offset_invariant_on_every_chunk_of_the_public_corpus():
    files = sorted((SQUAD / "corpus").glob("*.md"))
    assert files, "the public evaluation corpus is missing"
    total = 0
    for path in files:
        ex = extract(path)
        for c in chunk_document(ex).chunks:
            assert ex.text[c.char_from : c.char_to] == c.content
            assert path.read_text(encoding="utf-8")[c.char_from : c.char_to] == c.content
            total += 1
    assert total > 1000


def _check_invariants(text: str, target: int, overlap: int = 0) -> None:
    enc = FakeEncoder()
    ex = doc(text)
    assert len(ex.text) == len(text)  # control characters become spaces, one for one
    text = ex.text
    res = chunk_document(ex, ChunkOptions(target=target, overlap=overlap), enc.count_tokens, 64)
    prev_end = 0
    for c in res.chunks:
        assert text[c.char_from : c.char_to] == c.content
        assert c.content.strip() == c.content and c.content
        assert enc.count_tokens(c.text) <= 64 or len(c.content.split()) == 1
        if not overlap:
            assert c.char_from >= prev_end
        prev_end = c.char_to
    if not overlap:
        kept = "".join(c.content for c in res.chunks)
        assert "".join(kept.split()) == "".join(text.split())  # only whitespace is lost


prose = st.lists(
    st.one_of(
        st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80),
        st.sampled_from(["\n\n", ". ", "e.g. ", "3.14 ", "! ", "\n", "。", "Dr. X. "]),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(prose, st.integers(min_value=20, max_value=600))
def test_chunk_invariants_hold_for_any_text(text, target):
    _check_invariants(text, target)


@settings(max_examples=100, deadline=None)
@given(prose, st.integers(min_value=20, max_value=600), st.integers(min_value=1, max_value=80))
def test_chunk_invariants_hold_with_overlap(text, target, overlap):
    _check_invariants(text, target, overlap)


def test_markdown_extracted_as_is(tmp_path: Path):
    p = tmp_path / "n.md"
    p.write_bytes("# T\r\n\r\nCafé line one.\r\n\r\n## S\r\n\r\nTwo.".encode())
    ex = extract(p)
    assert ex.text == p.read_bytes().decode()
    assert [h.title for h in ex.headings] == ["T", "S"]
    assert ex.title == "T"


def test_heading_inside_code_fence_is_not_a_heading():
    from kbapp.extract.text import markdown_headings

    text = "# Real\n\n```\n# not a heading\n```\n"
    assert [h.title for h in markdown_headings(text)] == ["Real"]


markdownish = st.lists(
    st.one_of(
        st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=60),
        st.sampled_from(["\n\n", "\n# Head\n", "\n## Sub\n", "Title\n=====\n", "```\n# x\n```\n",
                         "\r\n", ". ", "- item\n", "\n\n\n"]),
    ),
    max_size=40,
).map("".join)  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(markdownish, st.sampled_from([".md", ".txt"]))
def test_extract_then_chunk_keeps_offsets_for_any_file(tmp_path_factory, text, suffix):
    path = tmp_path_factory.mktemp("prop") / f"f{suffix}"
    path.write_bytes(text.encode("utf-8"))
    if not text:
        return  # an empty file is a clear failure, tested elsewhere
    ex = extract(path)
    enc = FakeEncoder()
    res = chunk_document(ex, ChunkOptions(target=120), enc.count_tokens, 64)
    raw = path.read_bytes().decode("utf-8")
    for c in res.chunks:
        assert raw[c.char_from : c.char_to] == c.content == ex.text[c.char_from : c.char_to]
        assert enc.count_tokens(c.text) <= 64 or len(c.content.split()) == 1


def test_a_title_repeated_as_the_first_heading_is_said_once_in_the_header():
    """PDF outlines often start with the document's own title (other quotes, other case)."""
    from kbapp.extract.base import Heading

    text = "What’s New In Python 3.9\n\nSummary\n\nDictionaries gained a merge operator."
    heads = [Heading(0, 24, 1, "What’s New In Python 3.9"), Heading(26, 33, 2, "Summary")]
    res = chunk_document(doc(text, heads, title="What's New in Python 3.9"))
    assert [c.text for c in res.chunks] == [
        "[What's New in Python 3.9 > Summary]\nDictionaries gained a merge operator."
    ]
