"""Indexing a folder: states, failures that stay alone, incremental re-indexing, atomicity."""

import os
import shutil

import pymupdf
import pytest
from conftest import make_library, make_pdf

from kbapp.errors import LibraryBusy, SearchError
from kbapp.index import default_workers


def states(lib):
    return {os.path.basename(d.path): d.state for d in lib.status().documents}


def write_folder(root):
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.md").write_text("# Notes\n\nThe kettle boils at one hundred degrees.\n")
    (root / "plain.txt").write_text("Penguins live in the southern hemisphere.\n")
    make_pdf(
        root / "manual.pdf", ["The pump must be primed before use.", "Replace the filter yearly."]
    )
    return root


def test_folder_indexes_and_every_chunk_matches_its_canonical_slice(tmp_path, library):
    folder = write_folder(tmp_path / "docs")
    p = library.index([folder])
    assert p.indexed == 3 and p.failed == 0
    assert set(states(library).values()) == {"indexed"}
    conn = library.store.conn
    rows = conn.execute(
        "SELECT c.content, c.char_from, c.char_to, t.text FROM chunks c JOIN texts t USING(doc_id)"
    ).fetchall()
    assert rows and all(text[a:b] == content for content, a, b, text in rows)
    counts = {d.name: d.chunks for d in library.status().documents}
    written = dict(
        conn.execute(
            "SELECT d.name, count(*) FROM chunks c JOIN documents d ON d.id=c.doc_id GROUP BY d.name"
        )
    )
    assert counts == written  # the count shown is the count held


def test_corrupt_and_encrypted_pdfs_fail_alone_with_reasons(tmp_path, library):
    folder = write_folder(tmp_path / "docs")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n this is not a pdf at all \x00\x01")
    enc = pymupdf.open()
    enc.new_page().insert_text((72, 72), "secret text")
    enc.save(
        folder / "locked.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="pw", owner_pw="o"
    )
    (folder / "empty.md").write_bytes(b"")
    (folder / "sheet.xlsx").write_bytes(b"PK\x03\x04 not really")
    p = library.index([folder])
    st = {os.path.basename(d.path): d for d in library.status().documents}
    assert st["broken.pdf"].state == "failed" and st["broken.pdf"].reason
    assert st["locked.pdf"].state == "failed" and "password" in st["locked.pdf"].reason
    assert st["empty.md"].state == "failed" and "empty" in st["empty.md"].reason
    assert st["sheet.xlsx"].state == "failed" and "not a valid XLSX" in st["sheet.xlsx"].reason
    assert p.indexed == 3
    assert library.search("pump primed", mode="bm25").hits  # the rest stays searchable


def test_pdf_with_empty_user_password_opens(tmp_path, library):
    folder = tmp_path / "d"
    folder.mkdir()
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Owner-locked but readable text about volcanoes.")
    doc.save(folder / "owner.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="", owner_pw="x")
    library.index([folder])
    assert states(library) == {"owner.pdf": "indexed"}


def test_incremental_skips_unchanged_redoes_changed_removes_deleted(tmp_path, library):
    folder = write_folder(tmp_path / "docs")
    library.index([folder])
    ids_before = dict(library.store.conn.execute("SELECT id, content FROM chunks"))
    again = library.index([folder])
    assert again.indexed == 0 and again.unchanged == 3
    assert dict(library.store.conn.execute("SELECT id, content FROM chunks")) == ids_before

    (folder / "plain.txt").write_text("Penguins cannot fly but swim very well.\n")
    (folder / "notes.md").unlink()
    (folder / "new.md").write_text("A brand new note about tides.\n")
    p = library.index([folder])
    assert (p.indexed, p.removed) == (2, 1)
    assert set(states(library)) == {"plain.txt", "manual.pdf", "new.md"}
    contents = [r[0] for r in library.store.conn.execute("SELECT content FROM chunks")]
    assert any("swim" in c for c in contents) and not any("kettle" in c for c in contents)
    fts = library.store.conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
    assert fts == len(contents)  # no orphaned FTS rows
    assert len(library.vectors) == len(contents)


def test_touched_but_identical_file_is_not_reembedded(tmp_path, library):
    folder = write_folder(tmp_path / "docs")
    library.index([folder])
    before = dict(library.store.conn.execute("SELECT id, content FROM chunks"))
    os.utime(folder / "plain.txt", (1, 1))
    library.index([folder])
    assert dict(library.store.conn.execute("SELECT id, content FROM chunks")) == before


def test_retry_after_fixing_a_failed_file(tmp_path, library):
    folder = write_folder(tmp_path / "docs")
    bad = folder / "later.pdf"
    bad.write_bytes(b"garbage")
    library.index([folder])
    assert states(library)["later.pdf"] == "failed"
    make_pdf(bad, ["Fixed document about glaciers."])
    p = library.retry(bad)
    assert p.indexed == 1 and states(library)["later.pdf"] == "indexed"


def test_failure_on_reindex_removes_stale_chunks(tmp_path, library):
    folder = write_folder(tmp_path / "docs")
    library.index([folder])
    (folder / "manual.pdf").write_bytes(b"now corrupt")
    library.index([folder])
    assert states(library)["manual.pdf"] == "failed"
    assert not library.search("pump primed", mode="bm25").hits


def test_second_writer_gets_a_clear_busy_error(tmp_path, fake_encoder):
    folder = write_folder(tmp_path / "docs")
    a = make_library(tmp_path / "lib", fake_encoder)
    b = make_library(tmp_path / "lib", fake_encoder)
    with a.writer(), pytest.raises(LibraryBusy, match="in use"):
        b.index([folder])
    b.index([folder])  # free again once the first writer is done
    a.close()
    b.close()


def test_interrupted_document_is_requeued(tmp_path, library):
    folder = write_folder(tmp_path / "docs")
    library.index([folder])
    with library.store.atomic() as conn:
        conn.execute("UPDATE documents SET state='indexing' WHERE name='plain.txt'")
    library.index([folder])
    assert states(library)["plain.txt"] == "indexed"


def test_vector_cache_rebuilds_when_missing_or_corrupt(tmp_path, fake_encoder):
    folder = write_folder(tmp_path / "docs")
    lib = make_library(tmp_path / "lib", fake_encoder)
    lib.index([folder])
    expect = [h.chunk_id for h in lib.search("pump primed", mode="dense").hits]
    lib.close()
    for damage in ("delete", "truncate", "garbage"):
        f = tmp_path / "lib" / "vectors.hnsw"
        if damage == "delete":
            f.unlink()
        elif damage == "truncate":
            f.write_bytes(f.read_bytes()[:100])
        else:
            f.write_bytes(b"\x00" * 5000)
        lib2 = make_library(tmp_path / "lib", fake_encoder)
        assert [h.chunk_id for h in lib2.search("pump primed", mode="dense").hits] == expect
        lib2.close()


def test_vector_cache_that_disagrees_with_sqlite_is_not_trusted(tmp_path, fake_encoder):
    folder = write_folder(tmp_path / "docs")
    lib = make_library(tmp_path / "lib", fake_encoder)
    lib.index([folder])
    lib.close()
    saved = (
        (tmp_path / "lib" / "vectors.hnsw").read_bytes(),
        (tmp_path / "lib" / "vectors.json").read_text(),
    )
    lib = make_library(tmp_path / "lib", fake_encoder)
    (folder / "notes.md").unlink()
    lib.index([folder])
    lib.close()
    # put back the older cache: it still holds the deleted document's labels
    (tmp_path / "lib" / "vectors.hnsw").write_bytes(saved[0])
    (tmp_path / "lib" / "vectors.json").write_text(saved[1])
    lib = make_library(tmp_path / "lib", fake_encoder)
    known = {r[0] for r in lib.store.conn.execute("SELECT id FROM chunks")}
    hits = lib.search("kettle boils", mode="dense", min_dense=-1.0, weak_dense=-1.0).hits
    assert hits and all(h.chunk_id in known for h in hits)
    lib.close()


def test_model_change_makes_documents_stale_not_mixed(tmp_path, fake_encoder):
    folder = write_folder(tmp_path / "docs")
    lib = make_library(tmp_path / "lib", fake_encoder)
    lib.index([folder])
    lib.close()

    class Other(type(fake_encoder)):
        name = "other-model"

    lib = make_library(tmp_path / "lib", Other())
    assert set(states(lib).values()) == {"stale"}
    with pytest.raises(SearchError, match="another model"):
        lib.search("pump primed", mode="hybrid", min_dense=-1.0)
    lib.index()
    assert set(states(lib).values()) == {"indexed"}
    assert all(d.model == "other-model" for d in lib.status().documents)
    lib.close()


def test_hidden_files_and_symlink_loops_are_ignored(tmp_path, library):
    folder = write_folder(tmp_path / "docs")
    (folder / ".secret.md").write_text("hidden")
    (folder / "loop").symlink_to(folder, target_is_directory=True)
    library.index([folder])
    assert ".secret.md" not in states(library)
    assert len(states(library)) == 3


def test_removing_a_folder_removes_its_documents(tmp_path, library):
    folder = write_folder(tmp_path / "docs")
    library.index([folder])
    assert library.remove_folder(folder) == 3
    assert library.status().documents == []
    assert library.store.conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] == 0
    shutil.rmtree(folder)


def test_library_files_are_private(tmp_path, library):
    folder = write_folder(tmp_path / "docs")
    library.index([folder])
    for name in ("library.db", "vectors.hnsw", "vectors.json", "writer.lock"):
        assert (library.root / name).stat().st_mode & 0o077 == 0
    assert library.root.stat().st_mode & 0o077 == 0


def test_library_inside_a_watched_folder_is_not_indexed(tmp_path, fake_encoder):
    folder = write_folder(tmp_path / "docs")
    lib = make_library(folder / "kb-library", fake_encoder)
    p = lib.index([folder])
    assert p.unsupported == 0 and p.indexed == 3
    assert not any("kb-library" in d.path for d in lib.status().documents)
    lib.close()


def test_searching_an_empty_library_says_why(tmp_path, library):
    with pytest.raises(SearchError, match="no indexed documents"):
        library.search("anything")


def test_the_document_the_progress_names_is_the_one_marked_indexing(tmp_path, library):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(6):
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nThe tide table for pier {i}. " * 20)
    seen = []

    counts = []

    def progress(p):
        if p.current:
            states = {d.name: d.state for d in library.status().documents}
            seen.append(states.get(p.current))
            shown = sum(1 for s in states.values() if s == "indexing")
            counts.append((p.in_progress, shown, p.reading, p.describe()))

    library.index([folder], progress=progress)
    workers = library.settings.workers or default_workers()
    assert "indexing" in seen and "queued" not in seen
    # "N being read, M read and waiting to be embedded" adds up to the rows the table
    # shows as indexing; no more are being read than there are workers (once: "23 in
    # progress" on a 2-core machine)
    assert counts and all(said == shown for said, shown, _, _ in counts), counts
    assert all(reading <= workers for _, _, reading, _ in counts), (workers, counts)
    for said, _, reading, line in counts:
        if said > 1:
            assert f"{reading} being read" in line
    assert {d.state for d in library.status().documents} == {"indexed"}


def test_a_ligature_in_a_document_is_found_by_the_plain_word(tmp_path, library):
    folder = tmp_path / "docs"
    folder.mkdir()
    stored = "Each tank is \ufb01lled from the north well; the mis\ufb01ts are sent back."
    (folder / "tanks.txt").write_text(stored, encoding="utf-8")
    library.index([folder])
    for query in ("filled", "misfits", "\ufb01lled"):
        hits = library.search(query, mode="bm25").hits
        assert hits and hits[0].content == stored, query  # quoted exactly as stored


def test_a_version_number_in_the_question_finds_the_notes_of_that_release(tmp_path, library):
    """ "3.9" is one thing to the reader: the notes of 3.9 come first, not a page that has a
    3 and a 9 in other places."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes-3.9.md").write_text(
        "# Release 3.9\n\nDictionaries gained a merge operator in release 3.9, as the "
        "language committee had planned for a long time before the release was made.\n")
    (folder / "notes-3.10.md").write_text(
        "# Release 3.10\n\nThe merge operator: 9 modules use it, 3 more in 9 weeks, "
        "3 in 9 days.\n")  # fmt: skip
    library.index([folder])
    top = library.search("merge operator in release 3.9", mode="bm25").hits[0]
    assert top.path.endswith("notes-3.9.md")
    top = library.search("dictionaries merge operator 3.10", mode="bm25").hits[0]
    assert top.path.endswith("notes-3.10.md")


def test_an_indexing_run_says_where_its_time_went(tmp_path, library):
    """Every stage of the run is clocked: the workers' reading and chunking, the passages'
    and sentences' vectors, the commits, the vector index, the calibration; the stages of
    the indexing process itself never add up to more than the run took."""
    from kbapp.index import progress as P

    folder = write_folder(tmp_path / "docs")
    (folder / "two.md").write_text("The ferry leaves at nine. It returns at noon.\n")  # sentences
    run = library.index([folder])
    assert set(run.stages) == set(P.STAGES), run.stages
    assert all(s > 0.0 for s in run.stages.values()), run.stages
    own = sum(s for k, s in run.stages.items() if k not in P.WORKER_STAGES)
    assert own <= run.elapsed
    took = run.elapsed
    library.index([folder])  # a later run has its own clock: this one stopped when it ended
    assert run.elapsed == took


def test_the_time_line_names_the_stages_that_took_a_second_in_order():
    from kbapp.index.progress import Progress

    p = Progress(workers=2, started=0.0, finished=600.0)
    p.stages = {"commits": 12.0, "reading the files": 400.0, "passage vectors": 150.0,
                "chunking": 0.4, "calibration": 8.0}  # fmt: skip
    assert p.time_spent() == (
        "time: reading the files 7 min, summed over 2 workers; passage vectors 2 min; "
        "commits 12 s; calibration 8 s; 10 min in all"
    )
    assert Progress().time_spent() == ""


def test_progress_weighs_a_pdf_by_its_pages_not_its_bytes(tmp_path, fake_encoder):
    """An 80-page PDF of plain text takes a few KB; a note of 54 KB takes more bytes. The
    PDF is most of the work, and the progress once one of the two is done must say so (by
    bytes, the PDF done said 0.6 of the run; the note done would have said 0.9)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    make_pdf(folder / "manual.pdf", [f"Section {n}: the valve opens at {n} bar." for n in range(80)])
    (folder / "note.md").write_text("# Note\n\n" + "The kettle boils. " * 3000)
    assert (folder / "manual.pdf").stat().st_size < (folder / "note.md").stat().st_size
    lib = make_library(tmp_path / "lib", fake_encoder, workers=1)
    seen = []

    def progress(p):
        if p.done == 1 and not seen:
            indexed = {os.path.basename(d.path) for d in lib.status().documents if d.state == "indexed"}
            seen.append((indexed, p.fraction))

    lib.index([folder], progress=progress)
    lib.close()
    (indexed, fraction), = seen
    if indexed == {"note.md"}:
        assert fraction < 0.5, fraction  # 80 pages of text still to come
    else:
        assert indexed == {"manual.pdf"} and fraction > 0.75, (indexed, fraction)


def test_a_long_document_reports_progress_while_it_is_embedded(tmp_path, fake_encoder):
    """Its thousands of passages are embedded in slices with a report between them, so the
    window's bar and ETA move (one 2,400-page manual was two and a half silent minutes)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    paragraphs = [f"Paragraph {n} says the valve number {n} opens at noon and closes at dusk, "
                  "unless the harbour master decides otherwise for the tide." for n in range(6000)]
    (folder / "manual.md").write_text("# Manual\n\n" + "\n\n".join(paragraphs))
    lib = make_library(tmp_path / "lib", fake_encoder)
    seen = []
    lib.index([folder], progress=lambda p: seen.append((p.done, p.fraction)))
    lib.close()
    embedding = [f for done, f in seen if done == 0 and 0.5 < f < 1.0]
    assert len(embedding) >= 2, seen[-5:]  # read (half the work), then embedded in steps
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions)


def test_the_scans_still_to_read_count_at_the_ocr_speed_the_run_measured():
    """Half of ten text pages done at 0.2 core-seconds a page (0.03 reading, 0.17
    embedding), four of ten scanned pages OCR'd at 3 s a page: a scanned page weighs 15
    text pages, and the run is 195 of 480 page-weights done, not the half its text says
    (a mixed library's ETA was off by up to 56% of the run when scans weighed as text)."""
    from kbapp.index.progress import PAGE_WORK, Progress

    def run(ocr_seconds: float) -> Progress:
        return Progress(total=4, done=2, workers=2, work_total=10.0 * PAGE_WORK,
                        work_done=5.0 * PAGE_WORK, read_s=0.15, read_units=5.0 * PAGE_WORK,
                        embed_s=0.85, embed_units=5.0 * PAGE_WORK, ocr_total=10.0,
                        ocr_done=4.0, ocr_seconds=ocr_seconds, ocr_timed=4,
                        started=0.0, finished=39.0)  # fmt: skip

    p = run(ocr_seconds=12.0)
    assert p.scan_weight == pytest.approx(15.0 * PAGE_WORK)
    assert p.fraction == pytest.approx(195 / 480)
    assert p.eta_s == pytest.approx(39.0 * (480 - 195) / 195)
    slower = run(ocr_seconds=24.0)  # another machine's OCR: the run learns it
    assert slower.scan_weight == pytest.approx(30.0 * PAGE_WORK) and slower.eta_s > p.eta_s
    text_only = Progress(total=4, done=2, work_total=100.0, work_done=50.0, started=0.0, finished=20.0)
    assert text_only.eta_s == pytest.approx(20.0)  # without scans, as before


def test_planning_tells_scanned_pages_and_reading_corrects_it(tmp_path, fake_encoder):
    """A scan's pages are planned as OCR work from a look at their resources, and what the
    reading found (pages OCR'd, the worker's seconds) is what the ETA goes on with."""
    from conftest import make_scanned_pdf

    from kbapp.extract.pdf import page_shape

    folder = tmp_path / "docs"
    folder.mkdir()
    make_pdf(folder / "manual.pdf", [f"Section {n}: the valve opens at {n} bar." for n in range(6)])
    make_scanned_pdf(folder / "scan.pdf", ["The invoice is due on the first of May.",
                                            "Payment goes to the harbour office."])  # fmt: skip
    assert page_shape(folder / "manual.pdf") == (6, 0)
    assert page_shape(folder / "scan.pdf") == (2, 2)
    lib = make_library(tmp_path / "lib", fake_encoder, workers=1)
    planned = []
    done = lib.index([folder], progress=lambda p: planned.append(p.ocr_total))
    lib.close()
    assert planned[0] == 2 and done.indexed == 2
    assert done.ocr_total == done.ocr_done == 2 and done.ocr_timed == 2 and done.ocr_seconds > 0
    assert done.eta_s is None and done.fraction == pytest.approx(1.0)
