"""The window's one engine owner: a thread that holds the Library for the GUI.

The GUI thread never touches SQLite, hnswlib or MuPDF. It asks the engine with `call(fn,
on_done)`: `fn(library)` runs on the engine thread, in the order asked, and its result (or
exception) comes back as a queued signal on the GUI thread (GPT4All LocalDocs' database
thread, Picard's thread helper). A request of a `kind` ("search", "view", "documents") that
a newer request of the same kind has overtaken is dropped when it answers, so a slow search
never overwrites a newer one. Indexing is a job on its own thread (jobs.IndexThread); the
engine keeps serving searches meanwhile.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QThread, Signal, Slot

log = logging.getLogger(__name__)


class _Owner(QObject):
    """Lives on the engine thread; runs each request against the library."""

    replied = Signal(int, bool, object)  # (request id, ok, result or exception)

    def __init__(self, lib) -> None:
        super().__init__()
        self.lib = lib

    @Slot(int, object)
    def run(self, rid: int, fn: Callable[[Any], Any]) -> None:
        try:
            result = fn(self.lib)
        except Exception as exc:  # noqa: BLE001 - posted back and shown to the user
            log.debug("engine request %d failed: %s", rid, exc)
            self.replied.emit(rid, False, exc)
        else:
            self.replied.emit(rid, True, result)

    @Slot()
    def close(self) -> None:
        self.lib.close()  # this thread's SQLite connection, closed by its own thread


class Engine(QObject):
    _ask = Signal(int, object)
    _close = Signal()

    def __init__(self, lib, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.lib = lib
        self.thread = QThread()
        self.thread.setObjectName("kbapp-engine")
        self._owner = _Owner(lib)
        self._owner.moveToThread(self.thread)
        self._ask.connect(self._owner.run)
        self._close.connect(self._owner.close)
        self._owner.replied.connect(self._replied)
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple] = {}
        self._latest: dict[str, int] = {}
        self.thread.start()

    def call(
        self, fn: Callable[[Any], Any], on_done: Callable[[Any], None],
        on_error: Callable[[Exception], None] | None = None, kind: str | None = None,
    ) -> int:  # fmt: skip
        """Run fn(library) on the engine thread; on_done(result) on the GUI thread."""
        rid = next(self._ids)
        if kind is not None:
            self._latest[kind] = rid
        self._pending[rid] = (on_done, on_error, kind)
        self._ask.emit(rid, fn)
        return rid

    @property
    def busy(self) -> bool:
        return bool(self._pending)

    def _replied(self, rid: int, ok: bool, value: object) -> None:
        on_done, on_error, kind = self._pending.pop(rid, (None, None, None))
        if on_done is None or (kind is not None and self._latest.get(kind) != rid):
            return  # overtaken by a newer request of the same kind
        owner = getattr(on_done, "__self__", None)
        if isinstance(owner, QObject) and not shiboken6.isValid(owner):
            return
        if ok:
            on_done(value)
        elif on_error is not None:
            on_error(value)
        else:
            log.error("engine request failed: %s", value)

    def stop(self, timeout_ms: int = 10000) -> None:
        """Finish what was asked, close the engine thread's connection, end the thread."""
        self._close.emit()
        self.thread.quit()
        self.thread.wait(timeout_ms)
