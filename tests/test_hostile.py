"""A folder of bad inputs: each ends failed/unsupported with a reason a person understands
(or indexed with a visible warning), and the good files beside them index normally."""

import json
import os
from pathlib import Path

import pymupdf
import pytest
from conftest import make_pdf

GOOD = {"good one.md": "Lighthouses guide ships at night.", "ünïcødé 東京 🚀.txt":
        "Tokyo rockets and unicode names index fine.", "Ελληνικά.md": "Greek file about olives."}  # fmt: skip


@pytest.fixture
def hostile(tmp_path):
    d = tmp_path / "hostile"
    d.mkdir()
    for name, text in GOOD.items():
        (d / name).write_text(text)
    (d / "zero.pdf").write_bytes(b"")
    full = make_pdf(
        tmp_path / "full.pdf", [f"Page {i} about river boats and canals." for i in range(8)]
    )
    data = full.read_bytes()
    (d / "truncated.pdf").write_bytes(data[: int(len(data) * 0.6)])
    (d / "bad-xref.pdf").write_bytes(data.replace(b"xref", b"xqzz"))
    (d / "garbage.pdf").write_bytes(os.urandom(4096))
    doc = pymupdf.open()
    for _ in range(2000):
        doc.new_page()
    doc.save(d / "blank-2000.pdf")
    blank = pymupdf.open()
    page = blank.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 300, 300), False)
    pix.set_rect(pix.irect, (255, 255, 255))
    page.insert_image(page.rect, pixmap=pix)
    blank.save(d / "white-scan.pdf")
    with open(d / "huge.txt", "wb") as fh:  # 200 MB, sparse: the size alone decides
        fh.truncate(200 * 2**20)
    (d / "binary.md").write_bytes(bytes(range(256)) * 40)
    (d / "latin1.txt").write_bytes("Café au lait, crème brûlée.".encode("cp1252"))
    (d / "utf16.txt").write_bytes("UTF-16 text about kites.".encode("utf-16"))
    (d / "sheet.docx").write_bytes(b"PK\x03\x04")
    return d


def test_every_bad_input_fails_alone_with_a_reason(hostile, library):
    progress = library.index([hostile])
    docs = {Path(d.path).name: d for d in library.status().documents}
    for name in GOOD:
        assert docs[name].state == "indexed", (name, docs[name].reason)
    expect_failed = {
        "zero.pdf": "empty", "garbage.pdf": "damaged or is not a PDF",
        "blank-2000.pdf": "no text found", "huge.txt": "too large", "binary.md": "binary",
    }  # fmt: skip
    for name, words in expect_failed.items():
        assert docs[name].state == "failed", name
        assert words in docs[name].reason, (name, docs[name].reason)
    assert docs["sheet.docx"].state == "failed", docs["sheet.docx"].reason
    assert "not a valid DOCX" in docs["sheet.docx"].reason
    # damaged PDFs: what MuPDF repairs is indexed with a visible warning, else a reason
    for name in ("truncated.pdf", "bad-xref.pdf"):
        d = docs[name]
        assert (d.state == "indexed" and d.warnings) or (d.state == "failed" and d.reason), name
    assert docs["bad-xref.pdf"].state == "indexed"
    assert (
        docs["latin1.txt"].state == "indexed" and "Windows-1252" in docs["latin1.txt"].warnings[0]
    )
    assert docs["utf16.txt"].state == "indexed"
    assert docs["white-scan.pdf"].state == "failed"  # Tesseract comes with `make setup`
    assert "OCR found no words" in docs["white-scan.pdf"].reason
    assert progress.indexed >= len(GOOD) + 3
    hits = library.search("lighthouses ships", mode="bm25").hits
    assert hits and hits[0].name == "good one.md"
    assert all(r.reason is None or len(r.reason) < 300 for r in docs.values())  # one line each
    assert json.dumps([d.reason for d in docs.values()])  # reasons are plain text


def test_file_deleted_while_queued_is_removed_not_failed(tmp_path, library):
    d = tmp_path / "d"
    d.mkdir()
    for i in range(5):
        (d / f"n{i}.md").write_text(f"Note {i} about owls.")

    def progress(p):
        if p.current == "n0.md" and (d / "n3.md").exists():
            (d / "n3.md").unlink()

    library.index([d], progress=progress)
    names = {Path(x.path).name: x.state for x in library.status().documents}
    assert "n3.md" not in names and set(names.values()) == {"indexed"}


def test_unreadable_file_fails_with_the_os_reason(tmp_path, library, monkeypatch):
    d = tmp_path / "d"
    d.mkdir()
    (d / "ok.md").write_text("Readable.")
    locked = d / "locked.md"
    locked.write_text("secret")
    real = Path.open

    def guarded(self, *a, **k):
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return real(self, *a, **k)

    monkeypatch.setattr(Path, "open", guarded)  # works as root too, where chmod 000 would not
    library.index([d])
    st = {Path(x.path).name: x for x in library.status().documents}
    assert st["locked.md"].state == "failed" and "Permission denied" in st["locked.md"].reason
    assert st["ok.md"].state == "indexed"


@pytest.mark.parametrize("q", ["x" * 10000, "\x00\x07 ctrl \x1b[31m", '"unbalanced', "NEAR(a b)",
                               "a AND OR NOT b", "'; DROP TABLE chunks; --", "*", "🚀🚀"])  # fmt: skip
def test_hostile_queries_answer_or_explain(tmp_path, library, q):
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.md").write_text("Ships and lighthouses.")
    library.index([d])
    for mode in ("auto", "dense", "bm25", "hybrid"):
        res = library.search(q, mode=mode)
        assert res.state in ("ok", "weak", "no_answer")
    assert library.store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == 1


def test_many_tiny_files(tmp_path, library):
    d = tmp_path / "many"
    d.mkdir()
    for i in range(2000):
        (d / f"f{i:05d}.txt").write_text(f"tiny file number {i}")
    p = library.index([d])
    assert p.indexed == 2000 and library.status().chunks == 2000
    again = library.index([d])
    assert again.unchanged == 2000 and again.indexed == 0
