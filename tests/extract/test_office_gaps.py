"""The last gaps of the modern office formats, each on a file of the kind that failed:
an ODT whose manifest lists a missing thumbnail, a password-protected ODT, a workbook with
a DDE link, Word content controls and fields, RTF with binary payloads."""

from pathlib import Path

import pytest

from kbapp.errors import ExtractionError
from kbapp.extract import extract

DATA = Path(__file__).resolve().parents[1] / "data"


def test_an_odt_whose_manifest_lists_a_missing_part_is_read():
    ex = extract(DATA / "odf" / "nothumb.odt")  # LibreOffice's, its thumbnail taken out
    assert "Secret harbour plans for the winter." in ex.text


def test_a_password_protected_odt_says_so():
    with pytest.raises(ExtractionError, match="password-protected"):
        extract(DATA / "odf" / "locked.odt")  # saved by LibreOffice with a password


def test_a_workbook_with_a_dde_link_is_read_without_it():
    ex = extract(DATA / "office" / "dde-test.xlsx")  # oletools' test file
    assert "Long live open source!" in ex.text
    assert "The above link starts a shell" in ex.text


def _controls_docx(path):
    import docx
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls

    w = nsdecls("w")
    d = docx.Document()
    d.add_paragraph("An ordinary paragraph about the ferry timetable.")
    body = d.element.body
    body.insert(len(body) - 1, parse_xml(
        f'<w:sdt {w}><w:sdtPr><w:alias w:val="Summary"/></w:sdtPr><w:sdtContent><w:p><w:r>'
        "<w:t>The summary control says the harbour closes in January.</w:t></w:r></w:p>"
        "</w:sdtContent></w:sdt>"))  # fmt: skip
    p = d.add_paragraph("Customer: ")
    p._p.append(parse_xml(f"<w:sdt {w}><w:sdtContent><w:r><w:t>Okafor Marine Ltd</w:t></w:r>"
                          "</w:sdtContent></w:sdt>"))  # fmt: skip
    p = d.add_paragraph("Printed on ")
    p._p.append(parse_xml(f'<w:fldSimple {w} w:instr=" DATE "><w:r><w:t>4 March 2024</w:t>'
                          "</w:r></w:fldSimple>"))  # fmt: skip
    p = d.add_paragraph()
    for run in ('<w:fldChar w:fldCharType="begin"/>',
                '<w:instrText xml:space="preserve"> PAGEREF _Toc1 \\h </w:instrText>',
                '<w:fldChar w:fldCharType="separate"/>', "<w:t>Page seven of the pilot manual</w:t>",
                '<w:fldChar w:fldCharType="end"/>'):  # fmt: skip
        p._p.append(parse_xml(f"<w:r {w}>{run}</w:r>"))
    d.save(path)
    return path


def test_word_content_controls_and_field_results_are_read(tmp_path):
    ex = extract(_controls_docx(tmp_path / "form.docx"))
    assert "The summary control says the harbour closes in January." in ex.text  # block control
    assert "Customer: Okafor Marine Ltd" in ex.text  # a control inside a paragraph
    assert "Printed on 4 March 2024" in ex.text  # a simple field's result
    assert "Page seven of the pilot manual" in ex.text
    assert "PAGEREF" not in ex.text  # the field's instructions are not words


def test_rtf_with_binary_payloads_is_read_around_them(tmp_path):
    p = tmp_path / "report.rtf"
    p.write_bytes(b"{\\rtf1\\ansi\\deff0 {\\fonttbl{\\f0 Times;}}The boiler was serviced in May."
                  b"\\par {\\*\\objdata \\bin8 \x00\x01\xff\xfe\x89PNG} After the picture, the "
                  b"pump report follows.\\par}")  # fmt: skip
    ex = extract(p)
    assert "The boiler was serviced in May." in ex.text
    assert "After the picture, the pump report follows." in ex.text


def test_a_macro_enabled_word_document_is_read():
    ex = extract(DATA / "office" / "harmless-clean.docm")  # oletools' test file
    assert ex.kind == "docx"
    assert "This is a harmless test document." in ex.text
