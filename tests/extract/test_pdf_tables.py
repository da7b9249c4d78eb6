"""Tables in PDFs: a row is found by its row and column headers, not by its numbers alone.

The PDFs are typeset here with PyMuPDF's Story, as statistics profiles and yearly reports
print tables: column headers once at the top (wrapping onto two lines), each row's label
once at its left, years down the side or across the top."""

import random

import pymupdf
import pytest
from conftest import make_library

from kbapp.chunk import chunk_document, sentence_texts
from kbapp.cite import build_context, cite
from kbapp.extract import extract
from kbapp.extract.pdf_layout import layout_page

CSS = ("body {font-family: serif; font-size: 10pt;} td, th {padding: 1px 0 1px 16px;}"
       " td.l, th.l {padding-left: 0;}")  # fmt: skip
COLUMNS = ["Highways and streets", "Water and sewer facilities", "Other public buildings"]
YEARS = list(range(1970, 1987))


def _figures(seed: int) -> dict[int, list[str]]:
    rng = random.Random(seed)
    return {y: [f"{rng.uniform(1000, 30000):,.1f}" for _ in COLUMNS] for y in YEARS}


def _profile(path, state: str, seed: int) -> dict[int, list[str]]:
    """Page 1: a paragraph and a table with years down the side; page 2: a table with the
    years across the top and labels that wrap."""
    figures = _figures(seed)
    rng = random.Random(seed + 1)
    rates = [f"{rng.uniform(3, 15):.1f}" for _ in YEARS]
    jobs = [f"{rng.uniform(300, 5000):,.1f}" for _ in YEARS]
    head = "".join(f"<th>{c}</th>" for c in COLUMNS)
    rows = "".join(f"<tr><td class='l'>{y}</td>" + "".join(f"<td>{v}</td>" for v in figures[y])
                   + "</tr>" for y in YEARS)  # fmt: skip
    page1 = (f"<h1>{state}: public capital, 1970-1986</h1><p>This profile of {state} gives "
             "the public capital stock by kind for each year, in millions of 1982 dollars.</p>"
             f"<h2>Table 1. {state}: public capital stock</h2>"
             f"<table><tr><th class='l'>Year</th>{head}</tr>{rows}</table>")
    across = "".join(f"<th>{y}</th>" for y in YEARS[:5])
    page2 = (f"<h2>Table 2. {state}: employment, 1970-1974</h2><table><tr><th></th>{across}</tr>"
             "<tr><td class='l'>Non-agricultural employment (thousands)</td>"
             + "".join(f"<td>{v}</td>" for v in jobs[:5]) + "</tr>"
             "<tr><td class='l'>Unemployment rate (%)</td>"
             + "".join(f"<td>{v}</td>" for v in rates[:5]) + "</tr></table>")
    _story_pdf(path, [page1, page2])
    return {"figures": figures, "rates": rates, "jobs": jobs}


def _story_pdf(path, bodies: list[str]) -> None:
    """Each HTML body typeset from a new A4 page."""
    writer = pymupdf.DocumentWriter(str(path))
    for body in bodies:
        story = pymupdf.Story(html=body, user_css=CSS)
        more = True
        while more:
            device = writer.begin_page(pymupdf.paper_rect("a4"))
            more, _ = story.place(pymupdf.paper_rect("a4") + (54, 54, -54, -54))
            story.draw(device)
            writer.end_page()
    writer.close()


def _readings(path, pno: int) -> tuple[str, list[tuple[str, str]]]:
    with pymupdf.open(path) as doc:
        page = layout_page(doc[pno], boxes=False)
    return page.text, [(page.text[a:b], r) for a, b, r in page.readings]


def test_a_row_is_read_with_its_column_headers_and_prints_as_it_is(tmp_path):
    path = tmp_path / "ohio.pdf"
    data = _profile(path, "Ohio", 7)
    text, readings = _readings(path, 0)
    v = data["figures"][1983]
    printed = f"1983 {v[0]} {v[1]} {v[2]}"
    assert (printed, f"Year: 1983 | Highways and streets: {v[0]} | "
            f"Water and sewer facilities: {v[1]} | Other public buildings: {v[2]}") in readings
    # the header, wrapped onto two lines in print, is read as one row of whole names
    assert "Year | Highways and streets | Water and sewer facilities | Other public buildings" in [
        r for _, r in readings]
    assert len([r for _, r in readings if r.startswith("Year: ")]) == len(YEARS)
    assert printed in text  # what is cited and highlighted is the page as printed


def test_years_across_the_top_name_each_figure_and_a_wrapped_label_is_one(tmp_path):
    path = tmp_path / "ohio.pdf"
    data = _profile(path, "Ohio", 7)
    _, readings = _readings(path, 1)
    said = [r for _, r in readings]
    rates = data["rates"]
    assert ("Unemployment rate (%) | " + " | ".join(
        f"{y}: {r}" for y, r in zip(YEARS[:5], rates[:5], strict=True))) in said
    assert any(r.startswith("Non-agricultural employment (thousands) | 1970: ") for r in said)


def test_prose_with_numbers_is_no_table(tmp_path):
    path = tmp_path / "prose.pdf"
    body = "".join(
        f"<p>In {1970 + i} the council spent {100 + i * 7}.5 thousand on {i + 2} roads and "
        f"{i + 3} bridges, and {40 + i} more on schools than the year before.</p>" for i in range(12)
    )
    _story_pdf(path, [body])
    assert _readings(path, 0)[1] == []


def test_passages_are_read_with_the_headers_and_cite_the_print(tmp_path):
    path = tmp_path / "ohio.pdf"
    data = _profile(path, "Ohio", 7)
    ex = extract(path)
    chunks = chunk_document(ex).chunks
    v = data["figures"][1983]
    row = next(c for c in chunks if f"1983 {v[0]}" in c.content)
    assert row.content == ex.text[row.char_from : row.char_to]
    assert f"Year: 1983 | Highways and streets: {v[0]}" in row.text
    assert row.page_from == 1
    # each row is a sentence of its own, said with its headers
    said = sentence_texts(row)
    assert any(s.endswith(f"Water and sewer facilities: {v[1]} | Other public buildings: {v[2]}")
               for s in said)  # fmt: skip


# The rest of the library, so that words are as common or rare as in a real one (in six
# profiles alone every table word is in half the passages, and BM25 gives it no weight).
NOTES = [
    "The county repaved two highways and four streets in the spring, ahead of schedule.",
    "Water and sewer rates rise by three percent from July; the council voted five to two.",
    "The library, the town hall and other public buildings close early on Fridays.",
    "Capital stock of a firm is the value of its machines, buildings and vehicles.",
    "Employment in farming fell as machines replaced hand labour.",
    "The unemployment office moved to the second floor of the post office.",
    "Our garden club meets on Tuesdays to swap seeds and cuttings.",
    "The museum's new wing shows maps of the state's first roads.",
]


@pytest.fixture(scope="module")
def profiles(tmp_path_factory, real_encoder):
    root = tmp_path_factory.mktemp("tables")
    folder = root / "profiles"
    folder.mkdir()
    for n, note in enumerate(NOTES):
        (folder / f"note-{n}.md").write_text(f"# Note {n}\n\n{note}\n")
    data = {}
    for seed, state in enumerate(["Ohio", "Iowa", "Utah", "Maine", "Texas", "Idaho"]):
        data[state] = _profile(folder / f"state-{state.lower()}.pdf", state, seed * 11)
    lib = make_library(root / "lib", real_encoder)
    lib.index([folder])
    yield lib, data
    lib.close()


QUESTIONS = [  # (question, state, year, column)
    ("What was the public capital in water and sewer facilities of Iowa in 1984?", "Iowa", 1984, 1),
    ("Utah other public buildings capital stock 1981", "Utah", 1981, 2),
    ("How much did Maine have in highways and streets in 1986?", "Maine", 1986, 0),
    ("Texas water and sewer facilities 1980", "Texas", 1980, 1),
]


@pytest.mark.parametrize("question,state,year,column", QUESTIONS)
def test_the_figure_asked_for_is_the_first_answer(profiles, question, state, year, column):
    lib, data = profiles
    top = lib.search(question).hits[0]
    assert top.path.endswith(f"state-{state.lower()}.pdf"), (question, top.path)
    assert top.page_from == 1
    figure = data[state]["figures"][year][column]
    assert f"{year} " in top.content and figure in top.content, (question, top.content)
    # the card and a prompt say which figure is which; the citation stays the print
    assert f"Year: {year} | " in top.reading and f"{COLUMNS[column]}: {figure}" in top.reading
    prompt = build_context(question, cite([top]))
    assert f"{COLUMNS[column]}: {figure}" in prompt
    from kbapp.gui.search_pane import result_html

    card = result_html(top, cite([top])[0])  # one row to a line
    rows = card.split("<br>")
    assert len(rows) >= 2 and any(str(year) in r and figure in r and r.count("Year") == 1
                                  for r in rows), card  # fmt: skip


def test_a_rate_in_a_table_with_years_across_is_found(profiles):
    lib, data = profiles
    top = lib.search("What was the unemployment rate in Idaho in 1973?").hits[0]
    assert top.path.endswith("state-idaho.pdf") and top.page_from == 2
    assert data["Idaho"]["rates"][3] in top.content


BALANCE = [  # (label, 2019, 2018); None: a group's name on a line of its own
    ("Current assets:", None, None),
    ("Cash and cash equivalents", "$ 2,353", "$ 2,853"),
    ("Accounts receivable, net", "2,791", "2,686"),
    ("Inventories", "4,134", "3,964"),
    ("Total current assets", "12,971", "13,709"),
    ("Current liabilities:", None, None),
    ("Short-term borrowings", "(1,325)", "(1,211)"),
    ("Total current liabilities", "9,222", "7,244"),
]


def test_a_balance_sheet_row_is_read_under_its_group_and_its_years(tmp_path):
    """As a 10-K prints it: a spanning "December 31," over the years, "$" on the first
    and total rows, groups named on lines of their own, negatives in parentheses."""
    rows = "".join(
        f"<tr><td class='l' colspan='3'>{label}</td></tr>" if a is None else
        f"<tr><td class='l'>{label}</td><td>{a}</td><td>{b}</td></tr>" for label, a, b in BALANCE
    )  # fmt: skip
    body = ("<h2>Consolidated Balance Sheet (millions)</h2><table>"
            "<tr><th class='l'></th><th colspan='2'>December 31,</th></tr>"
            f"<tr><th class='l'></th><th>2019</th><th>2018</th></tr>{rows}</table>")  # fmt: skip
    path = tmp_path / "10k.pdf"
    _story_pdf(path, [body])
    said = [r for _, r in _readings(path, 0)[1]]
    assert ("Current assets: Total current assets | December 31, 2019: 12,971 | "
            "December 31, 2018: 13,709") in said, said
    assert ("Current assets: Cash and cash equivalents | December 31, 2019: $ 2,353 | "
            "December 31, 2018: $ 2,853") in said, said
    assert ("Current liabilities: Short-term borrowings | December 31, 2019: (1,325) | "
            "December 31, 2018: (1,211)") in said, said


def test_an_overlapping_passage_is_read_with_the_headers_too(tmp_path):
    from kbapp.config import ChunkOptions

    path = tmp_path / "ohio.pdf"
    _profile(path, "Ohio", 7)
    ex = extract(path)
    chunks = chunk_document(ex, ChunkOptions(overlap=120)).chunks
    rows = [c for c in chunks if "Highways and streets: " in c.text]
    assert len(rows) >= 2
    for c in rows:
        assert c.content == ex.text[c.char_from : c.char_to] and c.text.endswith(c.body)
