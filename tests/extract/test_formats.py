"""Office, OpenDocument, RTF, CSV, e-mail and source code: real files written with the
format libraries, indexed, searched, and cited at the place a reader knows (a slide, a
sheet's A1 range, a message, a line range), with every quote equal to its slice of the
canonical text."""

import json
import zipfile
from pathlib import Path

import pytest
from office_files import CODE, make_all, make_docx

from kbapp.cite import cite
from kbapp.cli import result_json
from kbapp.errors import KbError
from kbapp.extract import extract


@pytest.fixture
def indexed(tmp_path, library):
    files = make_all(tmp_path / "office")
    library.index([tmp_path / "office"])
    return library, files


def docs_by_name(library):
    return {Path(d.path).name: d for d in library.status().documents}


def first_hit(library, query, name):
    result = library.search(query, mode="bm25")
    hits = [h for h in result.hits if h.name == name]
    assert hits, (query, [h.name for h in result.hits])
    return hits[0], cite(hits)[0]


def test_every_format_indexes_and_every_quote_is_its_canonical_slice(indexed):
    library, files = indexed
    docs = docs_by_name(library)
    for kind, path in files.items():
        d = docs[path.name]
        assert d.state == "indexed", (kind, d.state, d.reason)
        assert d.chunks and d.chunks > 0, kind
    rows = library.store.conn.execute("SELECT doc_id, char_from, char_to, content FROM chunks")
    n = 0
    for doc_id, a, b, content in rows:
        assert library.text(doc_id)[a:b] == content
        n += 1
    assert n >= len(files)


def test_a_slide_is_cited_by_its_number_with_its_notes(indexed):
    library, _ = indexed
    hit, c = first_hit(library, "summer pastures reindeer", "deck.pptx")
    assert c.locator == "#slide=2" and c.where == "slide 2"
    assert hit.section == "Reindeer herding"
    assert "Inari" in library.text(hit.doc_id)  # speaker notes are read
    assert library.show(c.uri) == hit.content
    hit, c = first_hit(library, "Strokkur geysers", "volcano.odp")
    assert c.locator == "#slide=2" and "Iceland photo" in hit.content


def test_a_spreadsheet_row_is_cited_by_sheet_and_a1_range(indexed):
    library, _ = indexed
    hit, c = first_hit(library, "penguins zookeeper", "budget.xlsx")
    assert c.locator.startswith("#sheet=Staff%20list&range=A")
    assert c.where.startswith("Staff list!A") and c.where.endswith(":B3")
    # each row is readable on its own: its values carry their column's header
    assert "Name: Veikko | Role: Zookeeper of the penguins" in hit.content
    hit, c = first_hit(library, "Region 45", "budget.xlsx")
    first, last = c.where.split("!")[1].split(":")
    assert int(first[1:]) <= 47 <= int(last[1:])  # "Region 45" is on row 47
    # `show` takes the sheet form the card and README give, the whole one or typed by hand
    path = hit.path
    assert library.show(f"{path}{c.locator}") == hit.content
    assert "Region: Region 45" in library.show(f"{path}#sheet=Budget&range=A47:C47")
    assert "Zookeeper" in library.show(f"{path}#sheet=Staff%20list")
    with pytest.raises(KbError, match="no sheet 'Budgte'; its sheets: 'Budget', 'Staff list'"):
        library.show(f"{path}#sheet=Budgte&range=A1:C3")
    with pytest.raises(KbError, match="sheet=NAME&range=A1:C22"):
        library.show(f"{path}#range=A1:C3")
    hit, c = first_hit(library, "boat fund", "ledger.ods")
    assert c.where == "Ledger!A1:B3"
    hit, c = first_hit(library, "Veikko Oulu", "towns.csv")
    assert c.where == "towns!A1:B3"


def test_word_and_opendocument_text_keep_headings_tables_and_headers(indexed):
    library, _ = indexed
    hit, _ = first_hit(library, "kayak launch delays", "plan.docx")
    assert hit.section == "Budget > Risks"
    hit, _ = first_hit(library, "radio spots", "plan.docx")
    assert "Item: Radio spots | Cost: 8800 | Owner: Veikko" in hit.content  # never glued
    text = library.text(hit.doc_id)
    assert text.count("CONFIDENTIAL draft for the board") == 1  # once, not on every chunk
    hit, _ = first_hit(library, "ice breakers channel", "harbour.odt")
    assert hit.section == "Winter"
    hit, _ = first_hit(library, "Svalbard glaciers", "glaciers.rtf")
    assert "Glaciers in Svalbard retreat every year." in hit.content


def test_mail_keeps_headers_attachments_and_mailbox_messages(indexed):
    library, _ = indexed
    hit, c = first_hit(library, "Aino Virtanen sauna", "sauna.eml")
    assert "From: Aino Virtanen <aino@example.org>" in library.text(hit.doc_id)
    assert library.status().documents  # the title is the subject
    assert {d.title for d in library.status().documents if d.name == "sauna.eml"} == {
        "Sauna schedule"
    }
    hit, _ = first_hit(library, "kayak launch delays", "sauna.eml")  # the attached docx
    assert hit.section.startswith("Attachment: plan.docx")
    hit, c = first_hit(library, "lake froze", "keepers.mbox")
    assert c.locator == "#message=2" and hit.section == "Lake report"
    assert "<b>" not in hit.content  # the HTML body is rendered to text


def test_code_is_chunked_by_definition_and_cited_by_lines(indexed):
    library, files = indexed
    hit, c = first_hit(library, "auth callback", "sessions.py")  # the identifier's parts
    assert hit.symbol == "SessionStore.handleAuthCallback"
    lines = CODE.splitlines()
    cited = "\n".join(lines[hit.line_from - 1 : hit.line_to])
    assert "def handleAuthCallback" in cited and "return session" in cited
    assert "def parse_http_url" not in cited  # another definition is its own chunk
    assert hit.content.startswith(lines[hit.line_from - 1].strip())
    # the card says "lines 34–36"; the citation, and what a user types back, says the same
    assert c.where == f"lines {hit.line_from}–{hit.line_to}"
    assert c.locator == f"#line={hit.line_from},{hit.line_to}"
    typed = library.show(f"{files['code']}#line={hit.line_from},{hit.line_to}")
    assert typed.startswith(lines[hit.line_from - 1]) and "def handleAuthCallback" in typed
    assert library.show(f"{files['code']}{c.locator}") == "\n".join(
        lines[hit.line_from - 1 : hit.line_to]) + "\n"  # fmt: skip
    assert library.show(f"{files['code']}#line={hit.line_from}") == lines[hit.line_from - 1] + "\n"
    # what `search --json` prints (the CLI itself would open the real model)
    out = json.loads(json.dumps(result_json(library.search("handleAuthCallback"))))
    assert out["channel"] == "bm25"  # a symbol-shaped query goes to full-text search
    top = out["results"][0]
    assert top["symbol"] == "SessionStore.handleAuthCallback"
    assert (top["start_line"], top["end_line"]) == (hit.line_from, hit.line_to)
    assert top["category"] == "code"


def test_damaged_truncated_and_legacy_office_files_fail_alone_with_reasons(tmp_path, library):
    folder = tmp_path / "bad"
    folder.mkdir()
    good = make_docx(folder / "good.docx")
    data = good.read_bytes()
    (folder / "truncated.docx").write_bytes(data[: len(data) // 2])
    (folder / "renamed.pptx").write_bytes(b"this is a text file with the wrong name")
    (folder / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600)
    (folder / "broken.eml").write_bytes(b"\x00\x01\x02 not mail")
    with zipfile.ZipFile(folder / "bomb.xlsx", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("xl/workbook.xml", b"\x00" * (2**31 + 2**20))  # 2 GB of zeros, ~2 MB
    library.index([folder])
    docs = docs_by_name(library)
    assert docs["good.docx"].state == "indexed"
    expect = {
        "truncated.docx": "not a valid DOCX", "renamed.pptx": "not a valid PPTX",
        "broken.eml": "not a valid e-mail", "bomb.xlsx": "would unpack to",
    }  # fmt: skip
    for name, words in expect.items():
        assert docs[name].state == "failed", (name, docs[name].state, docs[name].reason)
        assert words in docs[name].reason, (name, docs[name].reason)
    assert docs["old.doc"].state == "failed"  # an OLE header and nothing behind it
    assert "damaged or truncated" in docs["old.doc"].reason


def test_code_without_a_grammar_or_that_does_not_parse_is_still_read(tmp_path):
    p = tmp_path / "broken.py"
    p.write_text("def ok():\n    return 1\n\ndef broken(:\n    pass\n" + "x = 1\n" * 400)
    ex = extract(p)
    assert ex.kind == "code" and any(s.name == "ok" for s in ex.symbols)
    from kbapp.chunk import chunk_document

    chunks = chunk_document(ex).chunks
    assert chunks and all(ex.text[c.char_from : c.char_to] == c.content for c in chunks)
    assert chunks[-1].line_to == 405


@pytest.mark.model
def test_questions_in_words_find_each_format_with_the_real_model(tmp_path, real_library):
    make_all(tmp_path / "office")
    real_library.index([tmp_path / "office"])
    asked = {
        "who is the zookeeper of the penguins?": "budget.xlsx",
        "when do herders move reindeer to summer pastures?": "deck.pptx",
        "on which day is the sauna heated?": "sauna.eml",
        "how often does the ferry to Suomenlinna leave?": "harbour.odt",
        "what is the marketing budget for the spring campaign?": "plan.docx",
        "when did the lake freeze?": "keepers.mbox",
    }
    for question, name in asked.items():
        result = real_library.search(question)
        assert result.state != "no_answer", (question, result.best_dense)
        assert result.hits[0].name in (name, "sauna.eml" if name == "plan.docx" else name), (
            question, [h.name for h in result.hits[:3]])  # fmt: skip


def test_a_mail_whose_charset_breaks_its_bytes_indexes_with_exact_offsets(tmp_path, library):
    """A signed mail declared UTF-7: its base64 signature decodes to lone surrogates, which
    neither SQLite nor the tokenizer take. Each becomes U+FFFD; the offsets stay exact."""
    folder = tmp_path / "mail"
    folder.mkdir()
    (folder / "utf7.eml").write_bytes(
        b'From: a@example.com\nTo: b@example.com\nContent-Type: text/plain; charset="UTF-7"\n'
        b"Subject: permissions\n\nThe wiki write permissions were granted today.\n"
        b"+AD4 quoted line\niQIzBAEBCgAdFiEECPbAhaBWEfiXj/kxdRlcPb+1fkUFAlx5WHkACgkQdRlcPb+1\n"
    )
    library.index([folder])
    (doc,) = library.status().documents
    assert doc.state == "indexed", doc.reason
    hit = library.search("wiki write permissions", mode="bm25").hits[0]
    text = library.text(hit.doc_id)
    assert hit.content == text[hit.char_from : hit.char_to] and "\ufffd" in text


def _as_openoffice_made(src: Path, dest: Path) -> Path:
    """The same document as OpenOffice.org and many LibreOffice files store it: a manifest
    with a DOCTYPE naming the external Manifest.dtd, in the OpenOffice.org namespace."""
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dest, "w") as w:
        for info in z.infolist():
            data = z.read(info)
            if info.filename == "META-INF/manifest.xml":
                data = data.replace(b"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0",
                                    b"http://openoffice.org/2001/manifest")  # fmt: skip
                data = data.replace(b"?>", b'?>\n<!DOCTYPE manifest:manifest PUBLIC '
                                    b'"-//OpenOffice.org//DTD Manifest 1.0//EN" "Manifest.dtd">', 1)
            w.writestr(info, data)
    return dest


def test_openoffice_made_documents_blank_ones_and_charts_are_read(tmp_path, library):
    import docx
    import pptx
    from office_files import make_odt
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    folder = tmp_path / "docs"
    folder.mkdir()
    _as_openoffice_made(make_odt(tmp_path / "harbour.odt"), folder / "harbour.odt")
    docx.Document().save(folder / "blank.docx")  # a blank template: no words at all
    prs = pptx.Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    data = CategoryChartData()
    data.categories = ["Helsinki", "Tampere"]
    data.add_series("Ferry passengers", (1200, 300))
    slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1), Inches(6),
                           Inches(4), data)  # fmt: skip
    prs.save(folder / "chart.pptx")
    library.index([folder])
    docs = docs_by_name(library)
    assert {n: d.state for n, d in docs.items()} == {
        "harbour.odt": "indexed", "blank.docx": "indexed", "chart.pptx": "indexed"}
    assert docs["blank.docx"].chunks == 0 and "no text" in docs["blank.docx"].warnings[0]
    hit = first_hit(library, "ferry to Suomenlinna", "harbour.odt")[0]
    assert "forty minutes" in hit.content
    hit, c = first_hit(library, "ferry passengers Tampere", "chart.pptx")
    assert "Tampere 300" in hit.content and c.locator == "#slide=1"
    # an untitled slide's card once read "Slide 1 — slide 1": the label says something else
    assert c.where == "slide 1" and c.label.casefold() != "slide 1", c.label


def test_a_real_excel_97_workbook_is_read_and_cited_by_sheet_and_range(tmp_path, library):
    """tests/data/clippy.xls (readxl's sample, made by Excel): read with xlrd, each sheet
    its own section, rows with their header, the date as a date."""
    import shutil

    folder = tmp_path / "old"
    folder.mkdir()
    shutil.copy(Path(__file__).resolve().parents[1] / "data" / "clippy.xls", folder)
    library.index([folder])
    (doc,) = library.status().documents
    assert doc.state == "indexed", doc.reason
    hit, c = first_hit(library, "paperclip weight grams", "clippy.xls")
    assert c.locator.startswith("#sheet=") and "&range=A" in c.locator
    assert library.text(hit.doc_id)[hit.char_from : hit.char_to] == hit.content
    assert "2007-01-01" in library.text(hit.doc_id)


def test_an_odp_that_breaks_the_schema_is_read_leniently_by_slide(tmp_path, library):
    """odfpy refuses values its schema does not allow (a real LibreOffice SDK sample says
    display-footer="visible"); the text is read anyway, slide by slide, and it says so."""
    from office_files import make_odp

    folder = tmp_path / "decks"
    folder.mkdir()
    src = make_odp(tmp_path / "volcano.odp")
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(folder / "volcano.odp", "w") as w:
        for info in z.infolist():
            data = z.read(info)
            if info.filename == "content.xml":
                data = data.replace(b"<draw:page ",
                                    b'<draw:page presentation:display-footer="visible" ', 1)
            w.writestr(info, data)
    library.index([folder])
    (doc,) = library.status().documents
    assert doc.state == "indexed" and "breaks the OpenDocument rules" in doc.warnings[0]
    hit, c = first_hit(library, "Strokkur erupts", "volcano.odp")
    assert c.locator == "#slide=2"
