"""Real PDFs made with PyMuPDF; scans made by rendering real text pages to images."""

import pymupdf
import pytest
from conftest import make_pdf, make_scanned_pdf

from kbapp.chunk import chunk_document
from kbapp.extract import extract
from kbapp.extract.pdf import layout_page

needs_tesseract = pytest.mark.ocr  # Tesseract comes with `make setup`: missing, these fail


def test_pages_map_to_character_ranges(tmp_path):
    p = make_pdf(tmp_path / "a.pdf", ["Alpha page text here.", "Beta page text here.", "Gamma."])
    ex = extract(p)
    assert [pg.number for pg in ex.pages] == [1, 2, 3]
    assert "Beta page" in ex.text[ex.pages[1].char_from : ex.pages[1].char_to]
    chunks = chunk_document(ex).chunks
    beta = next(c for c in chunks if "Beta" in c.content)
    assert beta.page_from == 2


def test_outline_gives_sections(tmp_path):
    pages = ["Introduction\n\nWhy pumps matter.", "Maintenance\n\nPrime the pump weekly."]
    p = make_pdf(tmp_path / "t.pdf", pages, toc=[[1, "Introduction", 1], [1, "Maintenance", 2]])
    ex = extract(p)
    chunk = next(c for c in chunk_document(ex).chunks if "Prime" in c.content)
    assert chunk.section == "Maintenance"
    assert chunk.text.startswith("[") and "Maintenance]" in chunk.text.splitlines()[0]


def test_font_size_headings_without_outline(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "Safety Rules", fontsize=20)
    page.insert_textbox(
        pymupdf.Rect(72, 100, 520, 300), "Wear gloves at all times. " * 5, fontsize=10
    )
    doc.save(tmp_path / "f.pdf")
    ex = extract(tmp_path / "f.pdf")
    assert [h.title for h in ex.headings] == ["Safety Rules"]


def test_running_headers_and_page_numbers_do_not_pollute_chunks(tmp_path):
    pages = [f"Body text of page {i} talks about topic {i}." for i in range(1, 7)]
    p = make_pdf(tmp_path / "h.pdf", pages, header="ACME Corp Confidential Handbook")
    ex = extract(p)
    assert ex.text.count("ACME Corp Confidential Handbook") == 6  # still in the canonical text
    chunks = chunk_document(ex).chunks
    assert chunks and not any("ACME" in c.content for c in chunks)
    assert all(ex.text[c.char_from : c.char_to] == c.content for c in chunks)


def test_two_columns_do_not_interleave(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    left = " ".join(f"left{i}" for i in range(60))
    right = " ".join(f"right{i}" for i in range(60))
    page.insert_textbox(pymupdf.Rect(40, 60, 285, 800), left, fontsize=10)
    page.insert_textbox(pymupdf.Rect(310, 60, 555, 800), right, fontsize=10)
    doc.save(tmp_path / "cols.pdf")
    text = extract(tmp_path / "cols.pdf").text
    assert text.index("left59") < text.index("right0")


def test_layout_is_deterministic_and_has_a_box_per_visible_char(tmp_path):
    p = make_pdf(tmp_path / "b.pdf", ["Boxes for every character."])
    with pymupdf.open(p) as doc:
        a, b = layout_page(doc[0]), layout_page(doc[0])
    assert a.text == b.text and len(a.char_boxes) == len(a.text)
    assert all(
        box is not None for ch, box in zip(a.text, a.char_boxes, strict=True) if not ch.isspace()
    )


@needs_tesseract
def test_scanned_pdf_is_ocrd_with_confidence_and_right_pages(tmp_path):
    pages = [
        "The first scanned page describes the northern lighthouse.",
        "The second scanned page explains how the harbour crane works.",
    ]
    p = make_scanned_pdf(tmp_path / "scan.pdf", pages)
    ex = extract(p)
    assert ex.ocr_pages == 2 and ex.ocr_confidence > 60
    assert "harbour crane" in ex.text[ex.pages[1].char_from : ex.pages[1].char_to]
    chunk = next(c for c in chunk_document(ex).chunks if "crane" in c.content)
    assert chunk.page_from == 2
    boxes = ex.pages[1].boxes
    assert boxes and all(
        0 <= x0 < x1 <= 595 and 0 <= y0 < y1 <= 842 for _, _, x0, y0, x1, y1 in boxes
    )


@needs_tesseract
def test_mixed_pdf_ocrs_exactly_the_scanned_pages(tmp_path):
    text_pdf = make_pdf(tmp_path / "t.pdf", ["A digital page about kayaks and paddles."])
    scan = make_scanned_pdf(tmp_path / "s.pdf", ["A scanned page about bicycles and gears."])
    doc = pymupdf.open(text_pdf)
    doc.insert_pdf(pymupdf.open(scan))
    doc.save(tmp_path / "mixed.pdf")
    ex = extract(tmp_path / "mixed.pdf")
    assert [pg.ocr for pg in ex.pages] == [False, True]
    assert "bicycles" in ex.text


@needs_tesseract
def test_png_image_is_ocrd(tmp_path):
    scan = make_scanned_pdf(tmp_path / "s.pdf", ["Invoice number seven hundred."])
    pymupdf.open(scan)[0].get_pixmap(dpi=200).save(tmp_path / "invoice.png")
    ex = extract(tmp_path / "invoice.png")
    assert "Invoice" in ex.text and ex.ocr_pages == 1


def test_image_only_pdf_without_tesseract_is_marked_needs_ocr(tmp_path, monkeypatch):
    import kbapp.extract.ocr as ocr

    monkeypatch.setattr(ocr, "tesseract_available", lambda: False)
    p = make_scanned_pdf(tmp_path / "s.pdf", ["Nothing readable without OCR."])
    ex = extract(p)
    assert ex.pages[0].needs_ocr and any("Tesseract is not installed" in w for w in ex.warnings)


def test_html_headings_and_text(tmp_path):
    (tmp_path / "p.html").write_text(
        "<html><head><title>Garden</title><style>p{}</style></head><body>"
        "<h1>Garden</h1><p>Roses need sun.</p><h2>Pests</h2><p>Aphids &amp; mites.</p>"
        "<script>var x=1;</script></body></html>"
    )
    ex = extract(tmp_path / "p.html")
    assert ex.title == "Garden" and "var x" not in ex.text and "Aphids & mites." in ex.text
    chunk = next(c for c in chunk_document(ex).chunks if "Aphids" in c.content)
    assert chunk.section == "Pests"


def test_html_that_never_closes_its_head_and_tables_keep_their_cells_apart(tmp_path):
    (tmp_path / "t.html").write_text(
        "<html><head><title>Ferries</title><meta charset=utf-8><style>td{}</style>"
        "<body><p>The timetable below lists every crossing.</p>"
        "<table><tr><th>Port</th><th>Leaves</th></tr><tr><td>alpha</td><td>beta</td></tr></table>"
    )
    ex = extract(tmp_path / "t.html")
    assert ex.title == "Ferries"
    assert "The timetable below lists every crossing." in ex.text
    assert "alpha | beta" in ex.text and "alphabeta" not in ex.text
    assert "Port | Leaves" in ex.text and "td{}" not in ex.text
    assert not ex.text.startswith("Ferries")  # the title is the title, not body text


def test_xhtml_with_a_prolog_and_a_title_that_prints_an_entity(tmp_path):
    # The title prints "&amp;" literally; it was unescaped twice and read "Fish & Chips".
    (tmp_path / "x.xhtml.html").write_bytes(
        b"<?xml version='1.0' encoding='iso-8859-1'?>\n<!DOCTYPE html>"
        b"<html xmlns='http://www.w3.org/1999/xhtml'><head><title>Fish &amp;amp; Chips</title>"
        b"</head><body><ul><li>Caf\xe9 opens at nine<li>Closed on Sundays</ul></body></html>"
    )
    ex = extract(tmp_path / "x.xhtml.html")
    assert ex.title == "Fish &amp; Chips"
    assert ex.text == "Caf\u00e9 opens at nine\n\nClosed on Sundays"


def test_ligatures_are_found_by_what_people_type_and_quoted_as_stored(tmp_path):
    from kbapp.search import bm25

    stored = "The tank was ﬁlled di\ufb00erently by the misﬁts."
    assert bm25.tokens(stored) == bm25.tokens("The tank was filled differently by the misfits.")
    (tmp_path / "l.txt").write_text(stored)
    ex = extract(tmp_path / "l.txt")
    assert chunk_document(ex).chunks[0].content == stored  # the quote is the text as it is


@pytest.mark.parametrize(
    "data,expect",
    [
        ("Grüße aus Köln".encode("utf-16"), "Grüße"),
        ("café crème".encode("cp1252"), "café"),
        (b"\xef\xbb\xbfBOM text", "BOM text"),
    ],
)
def test_text_encodings(tmp_path, data, expect):
    (tmp_path / "t.txt").write_bytes(data)
    assert expect in extract(tmp_path / "t.txt").text


def test_binary_named_md_fails_clearly(tmp_path):
    from kbapp.errors import ExtractionError

    (tmp_path / "x.md").write_bytes(bytes(range(256)) * 10)
    with pytest.raises(ExtractionError, match="binary"):
        extract(tmp_path / "x.md")


def test_epub_is_read_page_by_page(tmp_path):
    import zipfile

    chapter = (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
        "<head><title>C1</title></head><body><h1>Chapter One</h1>"
        "<p>The ferry leaves the harbour at dawn every Tuesday.</p></body></html>"
    )
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
        'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        '<dc:identifier id="id">x</dc:identifier><dc:title>Ferry Book</dc:title>'
        "<dc:language>en</dc:language></metadata><manifest>"
        '<item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest>'
        '<spine><itemref idref="c1"/></spine></package>'
    )
    container = (
        '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    path = tmp_path / "book.epub"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", container)
        z.writestr("content.opf", opf)
        z.writestr("c1.xhtml", chapter)
    ex = extract(path)
    assert ex.kind == "epub" and ex.pages and "ferry leaves the harbour" in ex.text
    chunk = next(c for c in chunk_document(ex).chunks if "ferry" in c.content)
    assert chunk.page_from == 1 and ex.text[chunk.char_from : chunk.char_to] == chunk.content


def test_extraction_time_limit_fails_with_a_reason(tmp_path):
    from kbapp.errors import ExtractionError

    p = make_pdf(tmp_path / "long.pdf", [f"Page {i} text." for i in range(30)])
    with pytest.raises(ExtractionError, match="longer than the time limit"):
        extract(p, time_limit=1e-9)


def test_an_outline_heading_is_found_only_as_its_own_block_and_through_ligatures():
    from kbapp.extract.pdf_headings import _find_title

    text = ("Read it with the read.table() function. There is more.\n\n"
            "7.1 The read.table() function\n\n"
            "4.1.1 Con\ufb01guring the system\n\nAn extra sta\ufb00appears")  # fmt: skip
    blocks, pos = [], 0
    for part in text.split("\n\n"):
        blocks.append((pos, pos + len(part)))
        pos += len(part) + 2
    found = _find_title(text, "The read.table() function", 0, len(text), blocks)
    assert found and text[found[0] : found[1]] == "7.1 The read.table() function"
    found = _find_title(text, "Configuring the system", 0, len(text), blocks)
    assert found and text[found[0] : found[1]].startswith("4.1.1 Con\ufb01guring")
    assert _find_title(text, "An extra staff appears", 0, len(text), blocks) == blocks[-1]
    assert _find_title(text, "There is more", 0, len(text), blocks) is None  # inside a block


def _textbook(path):
    """A German textbook's front and back matter as people print it: a contents page
    without dot leaders (numbers set right), an index of comma-separated page lists, a
    prose page with words hyphenated at line ends, a table of small numbers."""
    doc = pymupdf.open()

    def page(lines):
        p = doc.new_page()
        for n, line in enumerate(lines):
            left, right = line if isinstance(line, tuple) else (line, "")
            p.insert_text((72, 72 + 16 * n), left, fontsize=11)
            if right:
                p.insert_text((480, 72 + 16 * n), right, fontsize=11)

    page(["Inhaltsverzeichnis"] + [(f"{i}.{j} Abschnitt über Thema {i}{j}", str(3 + 8 * i + 2 * j))
                                   for i in range(1, 5) for j in range(1, 5)])  # fmt: skip
    words = ["Ableitung", "Basis", "Dichte", "Ebene", "Faktor", "Gerade", "Integral", "Kurve",
             "Limes", "Matrix", "Norm", "Raum", "Summe", "Vektor"]  # fmt: skip
    pages = range(5, 5 + 3 * len(words), 3)
    page(["Stichwortverzeichnis"] + [f"{w}, {a}, {a + 2}" for w, a in zip(words, pages, strict=True)])
    page(["Die Ableitung einer Funktion beschreibt ihre lokale Änderungsrate. Wir begin-",
          "nen mit einem einfachen Beispiel und zeigen dann, wie sich die Regeln auf",
          "zusammengesetzte Funktionen übertragen lassen. Das Integral ist die Um-",
          "kehrung der Ableitung; Nord-", "Amerika bleibt, wie es geschrieben wird."])  # fmt: skip
    staff = [45, 12, 33, 8, 27, 19, 40, 5, 22, 31]
    page(["Mitarbeiter nach Abteilung"]
         + [(f"Abteilung {n}", f"{a}   {a + 3}") for n, a in zip("ABCDEFGHIJ", staff, strict=True)])  # fmt: skip
    doc.save(path)
    return path


def test_contents_and_index_pages_without_leaders_are_not_passages(tmp_path):
    """A German textbook gave 18 passages of contents lines and index page lists."""
    ex = extract(_textbook(tmp_path / "lehrbuch.pdf"))
    chunks = chunk_document(ex).chunks
    assert {c.page_from for c in chunks} == {3, 4}, [(c.page_from, c.content[:40]) for c in chunks]
    # the pages stay in the canonical text: `show #page=1` still prints the contents
    assert "Abschnitt über Thema 11" in ex.text[ex.pages[0].char_from : ex.pages[0].char_to]
    table = next(c for c in chunks if c.page_from == 4)
    assert "Abteilung D" in table.content  # a table of small numbers is no index


def test_words_hyphenated_at_line_ends_are_whole_again(tmp_path):
    ex = extract(_textbook(tmp_path / "lehrbuch.pdf"))
    page = ex.text[ex.pages[2].char_from : ex.pages[2].char_to]
    assert "Wir beginnen mit" in page and "Umkehrung der Ableitung" in page
    assert "begin-" not in page and "Um-" not in page
    assert "Nord- Amerika" in page  # a compound's capital keeps its hyphen
    # the viewer's layout, box for box, is the same text the index holds
    with pymupdf.open(tmp_path / "lehrbuch.pdf") as doc:
        layout = layout_page(doc[2])
    assert layout.text == page and len(layout.char_boxes) == len(layout.text)


def test_a_compound_broken_at_its_own_hyphen_keeps_it(tmp_path):
    """LilyPond's manual breaks "option-name" after its hyphen; the page prints
    "option-name" whole elsewhere, so the line end is the compound's hyphen, not a
    syllable break: "option-name", not "optionname" (nor "option- name")."""
    path = tmp_path / "usage.pdf"
    doc = pymupdf.open()
    p = doc.new_page()
    for n, line in enumerate(["Set the symbol option-name to value.",
                              "The prefix no- may be added to option-",
                              "name to switch off an option. We begin-",
                              "ning with the rest."]):  # fmt: skip
        p.insert_text((72, 72 + 16 * n), line, fontsize=11)
    doc.save(path)
    text = extract(path).text
    assert "added to option-name to switch off" in text, text
    assert "beginning with" in text  # a word split by the break is whole again
    with pymupdf.open(path) as doc:
        layout = layout_page(doc[0])
    assert layout.text in text
    assert len(layout.char_boxes) == len(layout.text)


def test_control_characters_never_reach_passages_or_section_names(tmp_path):
    md = tmp_path / "notes.md"
    md.write_text("# Notes\n\n## Budget\x08 plan\x7f\n\nThe contractor\x0c budget is capped.\x1b\n")
    ex = extract(md)
    chunk = chunk_document(ex).chunks[0]
    assert chunk.section == "Budget plan"
    assert "The contractor  budget is capped." in chunk.content
    assert not any(ord(ch) < 32 and ch not in "\n\t\r" for ch in ex.text)
    assert len(ex.text) == len(md.read_text())  # one for one: every offset stays true


def _outline_worded_otherwise(path, named: bool):
    """Page 2 goes on with the section of page 1, then a new section starts halfway down
    under a heading its outline entry words otherwise. `named`: the entry points there
    through a named destination, as LaTeX and Texinfo write them."""
    doc = pymupdf.open()
    p1 = doc.new_page()
    p1.insert_text((72, 72), "Introduction", fontsize=16)
    p1.insert_textbox(pymupdf.Rect(72, 90, 520, 400), "Pumps move water uphill. " * 6, fontsize=11)
    p2 = doc.new_page()
    p2.insert_textbox(pymupdf.Rect(72, 72, 520, 300),
                      "The introduction goes on: valves keep water from flowing back. " * 3,
                      fontsize=11)  # fmt: skip
    p2.insert_text((72, 420), "3 Looking after the pump", fontsize=16)
    p2.insert_textbox(pymupdf.Rect(72, 440, 520, 700), "Prime the pump weekly with clean water. " * 3,
                      fontsize=11)  # fmt: skip
    y = 405  # the destination's top, just above the heading (as hyperref puts it)
    doc.set_toc([[1, "Introduction", 1],
                 [1, "Maintenance", 2, {"kind": pymupdf.LINK_GOTO, "page": 1, "to": pymupdf.Point(72, y)}]])  # fmt: skip
    if named:  # the same point under a name, in the PDF's own bottom-up coordinates
        entry = doc.get_toc(simple=False)[1][3]["xref"]
        page_ref = f"{doc[1].xref} 0 R"
        doc.xref_set_key(entry, "A", "<</S/GoTo/D(maintenance)>>")
        names = doc.get_new_xref()
        doc.update_object(names, f"<</Names[(maintenance)[{page_ref}/XYZ 72 {792 - y} 0]]>>")
        doc.xref_set_key(doc.pdf_catalog(), "Names", f"<</Dests {names} 0 R>>")
    doc.save(path)
    return path


@pytest.mark.parametrize("named", [False, True], ids=["direct", "named"])
def test_an_outline_entry_not_printed_as_its_heading_starts_where_it_points(tmp_path, named):
    """The entry "Maintenance" is printed "3 Looking after the pump". It labels what
    follows its destination; the top of the page still belongs to the introduction."""
    p = _outline_worded_otherwise(tmp_path / "pump.pdf", named)
    toc = pymupdf.open(p).get_toc(simple=False)
    assert toc[1][3]["kind"] == (pymupdf.LINK_NAMED if named else pymupdf.LINK_GOTO)
    chunks = chunk_document(extract(p)).chunks
    goes_on = next(c for c in chunks if "valves keep water" in c.content)
    prime = next(c for c in chunks if "Prime the pump" in c.content)
    assert goes_on.section != "Maintenance"  # (the first section is the title: no label)
    assert prime.section == "Maintenance"
    assert "valves" not in prime.content
