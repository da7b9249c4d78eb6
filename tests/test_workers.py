"""Extraction in worker processes: real crashes, real time limits, real Tesseract."""

import os
import signal
import stat
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from conftest import FakeEncoder, make_library, make_pdf, make_scanned_pdf

PAGES = [f"Page {i}: the harbour master logs every ship that enters the port." for i in range(6)]


def _states(lib):
    return {d.name: d for d in lib.status().documents}


def _children(name: str) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid,ppid,comm"], capture_output=True, text=True).stdout
    me = os.getpid()
    kids = {int(p) for p, pp, _ in (line.split(None, 2) for line in out.splitlines()[1:])
            if int(pp) == me}  # fmt: skip
    found = []
    for line in out.splitlines()[1:]:
        pid, ppid, comm = line.split(None, 2)
        if comm.strip().startswith(name) and (int(ppid) in kids or int(ppid) == me):
            found.append(int(pid))
    return found


def test_a_worker_that_crashes_fails_that_document_alone(tmp_path, fake_encoder):
    docs = tmp_path / "docs"
    docs.mkdir()
    make_scanned_pdf(docs / "b-crashes.pdf", PAGES)
    (docs / "a-first.md").write_text("A note about tugboats before the crash.")
    (docs / "c-after.md").write_text("A note about ferries after the crash.")
    lib = make_library(tmp_path / "lib", fake_encoder, workers=1)
    killed = []

    def crash_it(p) -> None:
        # while the scan is being OCR'd, the worker dies as a MuPDF segfault would kill it
        if p.current == "b-crashes.pdf" and p.page >= 1 and not killed:
            import multiprocessing

            for child in multiprocessing.active_children():
                os.kill(child.pid, signal.SIGSEGV)
                killed.append(child.pid)

    progress = lib.index([docs], progress=crash_it)
    assert killed
    states = _states(lib)
    assert states["b-crashes.pdf"].state == "failed"
    assert "crashed the document reader" in states["b-crashes.pdf"].reason
    assert states["a-first.md"].state == "indexed" and states["c-after.md"].state == "indexed"
    assert progress.indexed == 2 and progress.failed == 1
    assert lib.search("ferries after the crash", mode="bm25").hits
    lib.close()


def test_a_time_limit_really_stops_the_work_and_will_retry(tmp_path, fake_encoder):
    docs = tmp_path / "docs"
    docs.mkdir()
    make_scanned_pdf(docs / "slow.pdf", PAGES * 3)
    (docs / "quick.md").write_text("Quick note about buoys.")
    lib = make_library(tmp_path / "lib", fake_encoder, extract_time_limit_s=1.5)
    lib.index([docs])
    d = _states(lib)["slow.pdf"]
    assert d.state == "failed" and "time limit" in d.reason and "will retry" in d.reason
    assert _states(lib)["quick.md"].state == "indexed"
    assert _children("tesseract") == []  # nothing left running after the kill
    # the next run reads it again by itself once its retry time has come
    lib.store.documents.set_state([d.id], "failed", retry_after=0.0)
    lib2 = make_library(tmp_path / "lib", fake_encoder)
    assert lib2.index([docs]).total == 1
    assert _states(lib2)["slow.pdf"].state == "indexed"
    lib.close()
    lib2.close()


def test_ocr_under_a_small_time_limit_says_so_and_keeps_the_page_errors(tmp_path, fake_encoder):
    docs = tmp_path / "docs"
    docs.mkdir()
    make_scanned_pdf(docs / "scan.pdf", PAGES[:3])
    lib = make_library(tmp_path / "lib", fake_encoder, ocr_timeout_s=0.001)
    lib.index([docs])
    d = _states(lib)["scan.pdf"]
    assert d.state == "failed"
    assert "OCR failed on 3 of 3 page(s)" in d.reason
    assert "longer than" in d.reason and "will retry" in d.reason
    assert "empty" not in d.reason
    # once the machine has time, retry reads it
    lib2 = make_library(tmp_path / "lib", fake_encoder)
    lib2.retry()
    assert _states(lib2)["scan.pdf"].state == "indexed"
    lib.close()
    lib2.close()


def test_a_missing_ocr_language_is_named_not_called_a_timeout(tmp_path, fake_encoder):
    docs = tmp_path / "docs"
    docs.mkdir()
    make_scanned_pdf(docs / "scan.pdf", PAGES[:2])
    lib = make_library(tmp_path / "lib", fake_encoder, ocr_language="xyz")
    lib.index([docs])
    d = _states(lib)["scan.pdf"]
    assert d.state == "failed"
    assert "language 'xyz' is not installed" in d.reason and "longer than" not in d.reason
    assert "will retry" not in d.reason  # a setting must change; retrying would not help
    lib.close()


def test_big_documents_report_page_progress_and_a_converging_estimate(tmp_path, fake_encoder):
    docs = tmp_path / "docs"
    docs.mkdir()
    make_pdf(docs / "big.pdf", [f"Page {i} of a long manual about pumps and valves." for i in
                                range(120)])  # fmt: skip
    for i in range(4):
        make_pdf(docs / f"small{i}.pdf", [f"Short leaflet {i} about gaskets."])
    lib = make_library(tmp_path / "lib", fake_encoder)
    seen = []
    lib.index([docs], progress=lambda p: seen.append(replace(p)))
    pages = [(p.page, p.pages) for p in seen if p.current == "big.pdf" and p.pages == 120]
    assert len({pg for pg, _ in pages}) > 10  # many distinct page counts came through
    fractions = [p.fraction for p in seen]
    assert fractions == sorted(fractions)  # progress never goes back
    assert seen[-1].fraction == 1.0 and seen[-1].eta_s is None
    lib.close()


def test_ocr_scratch_files_are_private_and_removed(tmp_path, fake_encoder):
    docs = tmp_path / "docs"
    docs.mkdir()
    make_scanned_pdf(docs / "scan.pdf", PAGES[:2])
    root = Path(tempfile.gettempdir())
    before = {p.name for p in root.glob("tess_*")}
    modes = []

    def look(p) -> None:
        for d in root.glob("kbapp-ocr-*"):
            modes.append(stat.S_IMODE(d.stat().st_mode))

    lib = make_library(tmp_path / "lib", fake_encoder)
    lib.index([docs], progress=look)
    assert _states(lib)["scan.pdf"].state == "indexed"
    assert modes and set(modes) == {0o700}
    assert {p.name for p in root.glob("tess_*")} == before  # nothing world-readable left
    lib.close()


class _CountsOnlyHere(FakeEncoder):
    token_counter = None  # a count that does not pickle: the indexing process chunks


def test_workers_chunk_so_the_indexing_process_runs_no_chunking(tmp_path, fake_encoder,
                                                                monkeypatch):  # fmt: skip
    """The window shares its process with the embedder: chunking there held the interpreter
    while the window painted. Workers chunk with the encoder's own count, and what they cut
    is exactly what the indexing process cuts for an encoder whose count stays at home."""
    import sqlite3

    import kbapp.index.job

    docs = tmp_path / "docs"
    docs.mkdir()
    make_pdf(docs / "manual.pdf", PAGES)
    (docs / "notes.md").write_text("# Ferries\n\n" + " ".join(PAGES * 4) + "\n\n## Tugs\n\nSmall.")

    def rows(lib_dir: Path) -> list[tuple]:
        with sqlite3.connect(lib_dir / "library.db") as db:
            return db.execute(
                "SELECT d.path, c.seq, c.section, c.char_from, c.char_to, c.page_from, c.tokens,"
                " c.text FROM chunks c JOIN documents d ON d.id = c.doc_id ORDER BY d.path, c.seq"
            ).fetchall()

    real_chunker = kbapp.index.job.chunk_document

    def refuse(*a, **k):
        raise AssertionError("chunked in the indexing process")

    monkeypatch.setattr(kbapp.index.job, "chunk_document", refuse)
    lib = make_library(tmp_path / "in-workers", fake_encoder)
    p = lib.index([docs])
    lib.close()
    assert (p.indexed, p.failed) == (2, 0)

    monkeypatch.setattr(kbapp.index.job, "chunk_document", real_chunker)
    here = make_library(tmp_path / "here", _CountsOnlyHere())
    here.index([docs])
    here.close()
    got = rows(tmp_path / "in-workers")
    assert len(got) > 3 and got == rows(tmp_path / "here")


def test_where_no_worker_can_start_documents_are_read_and_chunked_in_process(tmp_path):
    """A script that indexes at import time (no `if __name__ == "__main__":`) cannot spawn
    workers: each would run the script again. kbapp says so and does the work itself."""
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    make_pdf(docs / "manual.pdf", PAGES)
    (docs / "notes.md").write_text("# Ferries\n\n" + " ".join(PAGES * 4))
    for n in range(3):  # more documents than one worker holds: every worker's share is read
        (docs / f"extra-{n}.txt").write_text(f"Extra note {n}. " + " ".join(PAGES))
    script = tmp_path / "index_here.py"
    script.write_text(
        "import logging, sys\n"
        "from pathlib import Path\n"
        "from kbapp.config import load_settings\n"
        "from kbapp.embed.hashed import HashedEncoder\n"
        "from kbapp.library import Library\n"
        "logging.basicConfig(level=logging.WARNING)\n"
        f"lib = Library(load_settings(Path({str(tmp_path / 'lib')!r})), HashedEncoder())\n"
        f"p = lib.index([Path({str(docs)!r})])\n"
        "print('RESULT', p.indexed, p.failed, p.chunks)\n"
        "lib.close()\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    results = [line.split()[1:] for line in out.stdout.splitlines() if line.startswith("RESULT")]
    assert results, out.stderr[-2000:]
    indexed, failed, chunks = map(int, results[-1])
    assert (indexed, failed) == (5, 0) and chunks > 3, out.stderr[-3000:]  # the reason, if one failed
    assert "cannot start" in out.stderr and "reading in-process" in out.stderr
