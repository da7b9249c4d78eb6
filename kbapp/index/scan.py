"""Scan: which files under a folder are documents, and what an indexing run must read
(new, changed, due for a retry, or waiting from an earlier run); files gone from disk leave
the library, links out of the folder and unreadable folders are recorded with a reason."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..extract import is_supported, unsupported_reason
from ..paths import display_path
from .commit import clear, delete

if TYPE_CHECKING:
    from .progress import Progress
    from .target import Target

log = logging.getLogger(__name__)

_IGNORED_SUFFIXES = (".tmp", ".part", ".crdownload", ".swp", ".lock", "~")


def is_ignored(name: str) -> bool:
    """Hidden files, editor and download temporaries: never documents."""
    return name.startswith((".", "~$")) or name.endswith(_IGNORED_SUFFIXES)


@dataclass(frozen=True)
class Skipped:
    """Something under a folder that is deliberately not read, with the reason."""

    path: Path
    reason: str


def walk_files(root: Path, skip: Path | None = None,
               skipped: list[Skipped] | None = None) -> Iterator[Path]:  # fmt: skip
    """Every file under root. Hidden ones and symlinked folders are left out (no loops), so
    is `skip` (the library's own folder, when it lies inside a watched one). A symlinked
    file is followed only when its target lies inside root; other links and unreadable
    folders go to `skipped` with the reason, so nothing is left out silently."""
    if root.is_file():
        yield root
        return
    inside = root.resolve()
    record = skipped.append if skipped is not None else (lambda s: None)

    def unreadable(err: OSError) -> None:
        record(Skipped(Path(err.filename), f"cannot read this folder: {err.strerror or err}"))

    for dirpath, dirnames, filenames in os.walk(root, followlinks=False, onerror=unreadable):
        if skip is not None and Path(dirpath) == skip:
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if not is_ignored(d))
        for name in sorted(filenames):
            if is_ignored(name):
                continue
            path = Path(dirpath) / name
            if path.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError):
                    record(Skipped(path, "a link whose target does not exist: not followed"))
                    continue
                if not target.is_relative_to(inside):
                    record(Skipped(path, f"a link to {display_path(str(target))}, outside the "
                                         "folder: not followed"))  # fmt: skip
                    continue
            yield path


class Plan:
    """The documents one run reads: `only_ids` when given (a retry), else what the folders
    (`paths`, or every watched folder) hold that is not current in the library."""

    def __init__(self, lib: Target, progress: Progress, paths: list[Path] | None = None,
                 only_ids: list[int] | None = None) -> None:  # fmt: skip
        self.lib, self.progress, self.paths, self.only_ids = lib, progress, paths, only_ids

    def plan(self) -> list[int]:
        """Record what is on disk; return the ids of documents to (re)index."""
        lib = self.lib
        docs = lib.store.documents
        if self.only_ids is not None:
            return list(self.only_ids)
        roots = self.paths if self.paths is not None else lib.folder_paths()
        queue: list[int] = []
        for root in roots:
            if not root.exists():
                log.warning("folder %s is missing; its documents are kept", display_path(str(root)))
                continue
            folder_id = lib.folder_id(root)
            seen: set[str] = set()
            skipped: list[Skipped] = []
            for path in walk_files(root, skip=lib.root, skipped=skipped):
                seen.add(str(path))
                doc_id = self._note_file(path, folder_id)
                if doc_id is not None:
                    queue.append(doc_id)
            for item in skipped:
                seen.add(str(item.path))
                self._note_skipped(item, folder_id)
            if root.is_dir():
                for did, p in docs.under(str(root)):
                    if p not in seen:
                        delete(lib, did)
                        self.progress.removed += 1
        queued = set(queue)
        queue += [i for i in docs.ids_in_state("queued") if i not in queued]
        return queue

    def _note_skipped(self, item: Skipped, folder_id: int | None) -> None:
        docs = self.lib.store.documents
        known = docs.known(str(item.path))
        if known is None:
            docs.add(str(item.path), folder_id, item.path.name, 0, 0.0, state="skipped",
                     reason=item.reason)  # fmt: skip
        elif known.state != "skipped":
            clear(self.lib, known.id, "skipped", item.reason)

    def _note_file(self, path: Path, folder_id: int | None) -> int | None:
        docs = self.lib.store.documents
        try:
            st = path.stat()
        except OSError as exc:
            log.warning("cannot stat %s: %s", display_path(str(path)), exc)
            return None
        known = docs.known(str(path))
        if not is_supported(path):
            if known is None:
                reason = unsupported_reason(path)
                docs.add(str(path), folder_id, path.name, st.st_size, st.st_mtime,
                         state="unsupported", kind=path.suffix.lower().lstrip("."),
                         reason=reason)  # fmt: skip
                self.progress.unsupported += 1
            return None
        if known is None:
            return docs.add(str(path), folder_id, path.name, st.st_size, st.st_mtime)
        current = known.stamp == self.lib.stamp
        unchanged_file = known.size == st.st_size and known.mtime == st.st_mtime
        retry_due = known.retry_after is not None and known.retry_after <= time.time()
        settled = known.state == "failed" or (known.state == "indexed" and current)
        if unchanged_file and settled and not retry_due:
            self.progress.unchanged += 1
            return None
        if known.state not in ("queued", "indexed"):
            docs.set_state([known.id], "queued")
        return known.id
