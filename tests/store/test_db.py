import sqlite3

import pytest

from kbapp.errors import LibraryError
from kbapp.store.db import DB_NAME, MIGRATIONS, SCHEMA_VERSION, Store


def test_new_library_is_wal_with_current_schema(tmp_path):
    s = Store(tmp_path)
    assert s.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert s.version() == SCHEMA_VERSION == len(MIGRATIONS)
    s.close()


def test_migration_backs_up_first_then_upgrades(tmp_path):
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.executescript(MIGRATIONS[0])
    conn.execute("PRAGMA user_version=1")
    conn.execute("INSERT INTO meta VALUES('model', 'm')")
    conn.commit()
    conn.close()
    s = Store(tmp_path)
    assert s.version() == SCHEMA_VERSION
    assert s.get_meta("model") == "m"  # data survives the migration
    backups = list(tmp_path.glob(f"{DB_NAME}.bak-v1-*"))
    assert len(backups) == 1
    old = sqlite3.connect(backups[0])
    assert old.execute("PRAGMA user_version").fetchone()[0] == 1
    assert old.execute("SELECT value FROM meta").fetchone()[0] == "m"
    s.close()


def test_newer_schema_is_refused_not_damaged(tmp_path):
    Store(tmp_path).close()
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 5}")
    conn.close()
    with pytest.raises(LibraryError, match="newer kbapp"):
        Store(tmp_path)


def test_atomic_rolls_back_everything_on_error(tmp_path):
    s = Store(tmp_path)
    with pytest.raises(RuntimeError), s.atomic() as conn:
        conn.execute("INSERT INTO meta VALUES('a', '1')")
        raise RuntimeError("boom")
    assert s.get_meta("a") is None
    s.close()


def test_unwritable_library_location_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(LibraryError, match="cannot open the library"):
        Store(blocker / "lib")


def test_looking_up_result_rows_by_id_never_walks_the_documents(tmp_path, library):
    """Search reads its candidates' rows by chunk id; the plan must start from the chunks'
    primary key, not from every indexed document (that grew with the library: 26 ms for
    40 rows at 84k passages)."""
    from kbapp.store.chunks import _ROW_COLUMNS, _SEARCHABLE_BY_ID

    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(30):
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nThe pump in shed {i} needs oil.\n")
    library.index([folder])
    sql = f"SELECT {_ROW_COLUMNS} {_SEARCHABLE_BY_ID} AND c.id IN (?, ?, ?)"
    plan = [r[3] for r in library.store.conn.execute(f"EXPLAIN QUERY PLAN {sql}",
                                                     (library.model, 1, 2, 3))]  # fmt: skip
    assert plan[0].startswith("SEARCH c USING INTEGER PRIMARY KEY"), plan
    assert library.search("pump shed oil", mode="bm25").hits


def _old_library(root):
    conn = sqlite3.connect(root / DB_NAME)
    conn.executescript(MIGRATIONS[0])
    conn.execute("PRAGMA user_version=1")
    conn.execute("INSERT INTO meta VALUES('model', 'bundled:all-MiniLM-L6-v2:torch')")
    # 64 MB of history: the backup before migrating takes a while, as on a real library,
    # and every process has read the old version before the first one is done
    conn.execute("CREATE TABLE history (blob BLOB)")
    conn.executemany("INSERT INTO history VALUES (randomblob(1048576))", [()] * 64)
    conn.commit()
    conn.close()


def _open_and_report(root, start, out):
    import json

    start.wait()
    try:
        s = Store(root)
        out.put(json.dumps({"version": s.version(), "model": s.get_meta("model")}))
        s.close()
    except Exception as exc:  # noqa: BLE001 - the test reports what each process saw
        out.put(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))


def test_two_processes_opening_an_old_library_migrate_it_once(tmp_path):
    """Both once migrated: the loser was told the library was damaged and lost its model."""
    import json
    import multiprocessing as mp

    _old_library(tmp_path)
    ctx = mp.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_open_and_report, args=(tmp_path, start, out)) for _ in range(4)]
    for p in procs:
        p.start()
    start.set()
    seen = [json.loads(out.get(timeout=120)) for _ in procs]
    for p in procs:
        p.join(60)
    assert seen == [{"version": SCHEMA_VERSION, "model": "bundled:all-MiniLM-L6-v2:torch"}] * 4
    assert len(list(tmp_path.glob(f"{DB_NAME}.bak-v1-*"))) == 1  # backed up once


def test_a_library_written_by_schema_5_opens_migrates_and_searches_again(tmp_path):
    """tests/data/schema5: a library kbapp wrote before sentence vectors (schema 5, pipeline
    3), over two documents in /tmp/kbapp-schema5-fixture/docs. Opened by this kbapp it is
    backed up and migrated, keeps its folder, documents and texts, reports them stale
    (another pipeline), and one index run makes them searchable again."""
    import shutil
    from pathlib import Path

    from conftest import FakeEncoder, make_library

    data = Path(__file__).resolve().parents[1] / "data" / "schema5"
    folder = Path("/tmp/kbapp-schema5-fixture/docs")  # the folder the old library watched
    shutil.rmtree(folder.parent, ignore_errors=True)
    shutil.copytree(data / "docs", folder)
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    for name in ("library.db", "folders.json"):
        shutil.copy(data / name, lib_dir / name)
    try:
        lib = make_library(lib_dir, FakeEncoder())
        assert lib.store.version() == SCHEMA_VERSION
        assert list(lib_dir.glob(f"{DB_NAME}.bak-v5-*"))  # the old file is kept first
        assert lib.folders() == [(str(folder), False)]
        status = {Path(d.path).name: d.state for d in lib.status().documents}
        assert status == {"harbour.md": "stale", "garden.txt": "stale"}
        doc = lib.document_id(folder / "harbour.md")
        assert "Ada Okafor" in lib.text(doc)
        progress = lib.index()
        assert (progress.indexed, progress.failed) == (2, 0)
        hits = lib.search("Okafor ferry timetable", mode="bm25").hits
        assert hits and Path(hits[0].path).name == "harbour.md"
        lib.close()
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)
