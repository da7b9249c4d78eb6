"""A damaged library.db is detected, explained, never quoted from, and rebuilt."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from conftest import make_library

ROOT = Path(__file__).resolve().parents[1]


def _docs(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(12):
        (docs / f"n{i}.md").write_text(f"Note {i}: the ferry timetable changes in winter. " * 8)
    return docs


def test_bit_rot_in_a_quote_is_never_shown_and_check_reports_it(tmp_path, fake_encoder):
    lib = make_library(tmp_path / "lib", fake_encoder)
    lib.index([_docs(tmp_path)])
    assert lib.check().ok
    target = lib.search("ferry timetable winter", mode="bm25").hits[0]
    lib.close()
    with sqlite3.connect(tmp_path / "lib" / "library.db") as conn:  # bit-rot inside a cell
        conn.execute("UPDATE chunks SET content = 'ZZZZ' || substr(content, 5) WHERE id = ?",
                     (target.chunk_id,))  # fmt: skip
    with sqlite3.connect(tmp_path / "lib" / "library.db") as conn:  # a row from before checksums
        other = conn.execute("SELECT id FROM chunks WHERE id != ? LIMIT 1",
                             (target.chunk_id,)).fetchone()[0]  # fmt: skip
        conn.execute("UPDATE chunks SET crc = NULL, content = 'YYYY' || substr(content, 5) "
                     "WHERE id = ?", (other,))  # fmt: skip
    lib = make_library(tmp_path / "lib", fake_encoder)
    for mode in ("bm25", "dense", "hybrid"):
        hits = lib.search("ferry timetable winter", mode=mode, min_dense=-1, top_k=40).hits
        assert hits and all(not h.content.startswith(("ZZZZ", "YYYY")) for h in hits)
        assert not {target.chunk_id, other} & {h.chunk_id for h in hits}
    report = lib.check()
    assert not report.ok and sorted(c for c, _ in report.mismatched) == sorted([target.chunk_id, other])
    assert "kbapp rebuild" in report.describe()
    lib.rebuild()
    assert lib.check().ok
    assert lib.folders() and len(lib.search("ferry", mode="bm25", top_k=40).hits) >= 12
    lib.close()


def test_overwritten_pages_are_explained_and_rebuild_recovers(tmp_path):
    docs = _docs(tmp_path)
    lib = tmp_path / "lib"

    def kb(*args):
        return subprocess.run([sys.executable, "-m", "kbapp", "--library", str(lib), *args],
                              capture_output=True, text=True, timeout=300, cwd=ROOT,
                              env=dict(os.environ, HF_HUB_OFFLINE="1"))  # fmt: skip

    assert kb("index", str(docs)).returncode == 0
    db = lib / "library.db"
    data = bytearray(db.read_bytes())
    page = 4096
    for n in (2, 3, 4):  # three pages overwritten
        data[n * page : (n + 1) * page] = b"\xa5" * page
    db.write_bytes(bytes(data))
    check = kb("check")
    assert check.returncode == 1 and "damaged" in check.stdout and "Traceback" not in check.stderr
    index = kb("index")  # a writer refuses to bury the damage under new rows
    assert index.returncode == 1 and "damaged" in index.stderr and "kbapp rebuild" in index.stderr
    assert "Traceback" not in index.stderr and db.read_bytes() == bytes(data)
    search = kb("search", "ferry timetable", "--json", "--mode", "bm25")
    if search.returncode != 0:  # whatever it touched, it says so in words and JSON
        assert "Traceback" not in search.stderr
        assert json.loads(search.stdout)["state"] == "error"
    rebuilt = kb("rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert kb("check").returncode == 0
    out = json.loads(kb("search", "ferry timetable", "--json", "--mode", "bm25").stdout)
    assert out["state"] in ("ok", "weak") and out["results"]
    assert any(p.name.startswith("library.db.damaged-") for p in lib.iterdir())
