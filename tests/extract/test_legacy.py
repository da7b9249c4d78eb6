"""Word and PowerPoint 97-2003 files, real ones (tests/data/README.md says where each comes
from): their text, slides in order, fields, tables, notes, passwords, and a search that
finds a sentence in its own file at the right slide."""

import shutil
from pathlib import Path

import pytest

from kbapp.chunk import chunk_document
from kbapp.cite import cite
from kbapp.errors import ExtractionError
from kbapp.extract import extract

DATA = Path(__file__).resolve().parents[1] / "data" / "legacy"


def test_a_word_97_document_reads_as_its_paragraphs_with_table_rows():
    ex = extract(DATA / "report.doc")  # LibreOffice's Word 97-2003 export
    assert ex.kind == "doc" and ex.title == "Harbour maintenance report"
    assert "the contractor Okafor Marine will dredge the channel" in ex.text
    assert "Fenders | 18,000 | May" in ex.text  # a table row keeps its cells together
    chunks = chunk_document(ex).chunks
    assert any("capped at 18,000 euros" in c.content for c in chunks)
    comment = next(c for c in chunks if "whether VAT is included" in c.content)
    assert comment.section == "Comments"  # said once, in its own section at the end
    for c in chunks:
        assert ex.text[c.char_from : c.char_to] == c.content


def test_documents_saved_by_word_keep_field_results_and_their_accents():
    ex = extract(DATA / "harmless-clean.doc")  # saved by Word 2016 (oletools' test files)
    assert "This is a harmless test document." in ex.text
    assert "ünicöde-ßtringß" in ex.text
    dde = extract(DATA / "dde-test-from-office2016.doc")
    assert "Hope this works." in dde.text
    assert "mean unicode chars (üöä)" in dde.text  # a field's result stays
    assert "DDEAUTO" not in dde.text and "cmd.exe" not in dde.text  # its instructions go
    assert "yet another test sample for doc type" in extract(DATA / "sample_1.doc").text


def test_a_powerpoint_97_deck_is_one_part_per_slide_with_titles_text_boxes_and_notes():
    ex = extract(DATA / "deck.ppt")
    assert ex.kind == "ppt"
    assert [p.number for p in ex.pages] == [1, 2, 3]
    assert [h.title for h in ex.headings] == ["Field season kickoff", "Sampling plan", "Risks"]

    def slide_of(words):
        at = ex.text.index(words)
        return next(p.number for p in ex.pages if p.char_from <= at < p.char_to)

    assert slide_of("taken at dawn from three lakes") == 2
    assert slide_of("Notes: Remind the team to label every bottle") == 2
    assert slide_of("Lake Zweifachtorus") == 3  # a text box, not a placeholder
    made_by_powerpoint = extract(DATA / "embedded-simple-2007.ppt")
    assert "This slide contains an embedded object" in made_by_powerpoint.text
    assert made_by_powerpoint.headings[0].title == "Embedded Objects"


@pytest.mark.parametrize("name", ["encrypted.doc", "encrypted.ppt"])
def test_a_password_protected_file_says_so(name):
    with pytest.raises(ExtractionError, match="password-protected"):
        extract(DATA / name)


def test_a_doc_that_is_really_text_rtf_or_a_docx_is_read_as_what_it_is(tmp_path):
    (tmp_path / "notes.doc").write_text("Meeting notes\r\n\r\nThe ferry leaves at nine.\r\n")
    assert "The ferry leaves at nine." in extract(tmp_path / "notes.doc").text
    (tmp_path / "letter.doc").write_text(r"{\rtf1\ansi Dear client,\par the invoice is paid.}")
    assert "the invoice is paid." in extract(tmp_path / "letter.doc").text
    shutil.copy(DATA / "deck.ppt", tmp_path / "old.doc")  # an OLE file of the wrong kind
    with pytest.raises(ExtractionError, match="not a Word document"):
        extract(tmp_path / "old.doc")
    (tmp_path / "new.doc").write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    with pytest.raises(ExtractionError, match="rename it to .docx"):
        extract(tmp_path / "new.doc")
    damaged = (DATA / "harmless-clean.doc").read_bytes()
    (tmp_path / "cut.doc").write_bytes(damaged[: len(damaged) // 2])
    with pytest.raises(ExtractionError, match="damaged or truncated"):
        extract(tmp_path / "cut.doc")


@pytest.mark.model
def test_a_sentence_from_a_legacy_file_is_found_in_it_at_its_slide(tmp_path, real_library):
    folder = tmp_path / "archive"
    shutil.copytree(DATA, folder)
    real_library.index([folder])
    states = {Path(d.path).name: (d.state, d.reason) for d in real_library.status().documents}
    assert states["encrypted.doc"][0] == "failed"
    assert all(s == "indexed" for n, (s, _) in states.items() if not n.startswith("encrypted")), (
        states
    )
    for query, name, where in [
        ("when will the contractor dredge the channel", "report.doc", "#char="),
        ("label every bottle with the lake code", "deck.ppt", "#slide=2"),
        ("Zweifachtorus", "deck.ppt", "#slide=3"),
        ("a harmless test document without macros", "harmless-clean.doc", "#char="),
    ]:
        result = real_library.search(query)
        assert result.state != "no_answer", (query, result.reason)
        top = list(zip(result.hits, cite(result.hits), strict=True))[:3]
        assert any(h.name == name and where in c.locator for h, c in top), (query, [
            (h.name, c.locator) for h, c in top])  # fmt: skip
