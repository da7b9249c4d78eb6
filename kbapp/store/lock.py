"""The single-writer lock of one library: an flock on `writer.lock` across processes and
a thread lock within this one, re-entrant for the thread that holds it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from ..errors import LibraryBusy

LOCK_FILE = "writer.lock"


class WriterLock:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.lock = threading.RLock()  # the thread lock; a test watches who takes it
        self._fh = None
        self._depth = 0

    @contextlib.contextmanager
    def hold(self, wait: bool = False) -> Iterator[None]:
        """Without `wait`, a writer on another thread of this process is refused at once
        too (LibraryBusy), never waited for."""
        if not self.lock.acquire(blocking=wait):
            raise LibraryBusy(
                f"the library at {self.root} is being written by this kbapp (indexing); "
                "try again when it has finished"
            )
        try:
            if self._depth == 0:
                fh = open(self.root / LOCK_FILE, "a+")  # noqa: SIM115 - held across calls
                os.chmod(fh.name, 0o600)
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
                except BlockingIOError as exc:
                    fh.close()
                    raise LibraryBusy(
                        f"the library at {self.root} is in use by another kbapp process that "
                        "is indexing it; try again when it has finished"
                    ) from exc
                self._fh = fh
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fh is not None:
                    fcntl.flock(self._fh, fcntl.LOCK_UN)
                    self._fh.close()
                    self._fh = None
        finally:
            self.lock.release()
