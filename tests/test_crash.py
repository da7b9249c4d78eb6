"""SIGKILL the indexer at random points, start it again, and compare the library with one
indexed without interruption: same documents, chunks, vectors, FTS rows, hnswlib labels."""

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import SQUAD, make_library

RUNNER = """
import sys, time
sys.path.insert(0, {tests!r})
from conftest import FakeEncoder, make_library
import kbapp.index.job as pipeline
pipeline.FLUSH_CHUNKS = 64          # many small commits: more places to be killed in
class Slow(FakeEncoder):
    def encode(self, texts, batch_size=32):
        time.sleep(0.05)
        return super().encode(texts, batch_size)
lib = make_library({lib!r}, Slow())
lib.index([{docs!r}], progress=lambda p: print("progress", p.done, flush=True))
print("done", flush=True)
"""


def run_indexer(lib: Path, docs: Path, kill_at: tuple[int, float] | None) -> int | None:
    """Run to the end, or SIGKILL once `done` reaches kill_at[0], kill_at[1] s later.
    Returns the progress count seen at the kill (None when it ran to the end)."""
    code = RUNNER.format(tests=str(Path(__file__).parent), lib=str(lib), docs=str(docs))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    if kill_at is None:
        out, _ = proc.communicate(timeout=300)
        assert "done" in out
        return None
    seen = 0
    for line in proc.stdout:
        if line.startswith("progress"):
            seen = int(line.split()[1])
            if seen >= kill_at[0]:
                break
        elif line.startswith("done"):
            break
    time.sleep(kill_at[1])
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    return seen


def snapshot(lib_path: Path, encoder) -> dict:
    lib = make_library(lib_path, encoder)
    conn = lib.store.conn
    chunks = conn.execute(
        "SELECT d.path, c.seq, c.char_from, c.char_to, c.content, length(c.vector) "
        "FROM chunks c JOIN documents d ON d.id = c.doc_id ORDER BY d.path, c.seq"
    ).fetchall()
    ids = {r[0] for r in conn.execute("SELECT id FROM chunks")}
    fts = {r[0] for r in conn.execute("SELECT rowid FROM chunks_fts")}
    labels = set(lib.vectors._alive)
    snap = {
        "documents": conn.execute(
            "SELECT path, state, chunks, content_hash FROM documents ORDER BY path"
        ).fetchall(),
        "chunks": chunks,
        "fts_matches_chunks": fts == ids,
        "labels_match_chunks": labels == ids,
        "orphans": conn.execute(
            "SELECT count(*) FROM chunks WHERE doc_id NOT IN (SELECT id FROM documents)"
        ).fetchone()[0],
        "texts": conn.execute("SELECT count(*) FROM texts").fetchone()[0],
    }
    lib.close()
    return snap


def test_kill_anywhere_then_resume_equals_uninterrupted(tmp_path, fake_encoder):
    docs = tmp_path / "docs"
    docs.mkdir()
    for p in sorted((SQUAD / "corpus").glob("*.md"))[:12]:
        (docs / p.name).write_bytes(p.read_bytes())
    reference = tmp_path / "ref"
    run_indexer(reference, docs, None)
    expected = snapshot(reference, fake_encoder)
    assert expected["chunks"] and expected["fts_matches_chunks"] and expected["labels_match_chunks"]

    rng = random.Random(20261202)
    victim = tmp_path / "victim"
    kills = 0
    for _ in range(8):
        # each run resumes the last: kill it after a random few more documents
        run_indexer(victim, docs, (rng.randint(0, 2), rng.uniform(0.0, 0.15)))
        kills += 1
    mid = make_library(victim, fake_encoder).status()
    assert mid.count("indexed") < len(expected["documents"]), "the kills landed mid-index"
    run_indexer(victim, docs, None)
    got = snapshot(victim, fake_encoder)
    assert got == expected, f"library differs after {kills} kills"
    assert all(state == "indexed" for _, state, _, _ in got["documents"])
