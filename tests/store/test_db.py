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
