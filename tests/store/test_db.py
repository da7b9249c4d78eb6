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
