"""The library's folder list has a copy beside the database (`folders.json`), so `rebuild`
keeps the folders even when the database pages that held them are damaged."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..paths import from_db, to_db

FOLDERS_FILE = "folders.json"


def save_copy(root: Path, folders: list[tuple[str, bool]]) -> None:
    rows = [{"path": to_db(p), "paused": paused} for p, paused in folders]
    tmp = root / (FOLDERS_FILE + ".tmp")
    tmp.write_text(json.dumps(rows, ensure_ascii=False))
    os.chmod(tmp, 0o600)
    os.replace(tmp, root / FOLDERS_FILE)


def saved_copy(root: Path) -> list[tuple[str, bool]]:
    """The copy's folders ([] when it is missing or unreadable)."""
    try:
        rows = json.loads((root / FOLDERS_FILE).read_text())
        return [(from_db(r["path"]), bool(r["paused"])) for r in rows]
    except (OSError, ValueError, KeyError, TypeError):
        return []
