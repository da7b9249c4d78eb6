"""Background work for the window: a function on a thread pool with its result posted back
(as MusicBrainz Picard does), and the indexing job on its own QThread with progress."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThread, QThreadPool, Signal

from ..pipeline import Progress

log = logging.getLogger(__name__)


class _Relay(QObject):
    done = Signal(object)
    failed = Signal(object)


class _Task(QRunnable):
    def __init__(self, fn: Callable[[], Any], relay: _Relay) -> None:
        super().__init__()
        self.fn = fn
        self.relay = relay

    def run(self) -> None:
        try:
            result = self.fn()
        except Exception as exc:  # noqa: BLE001 - posted back and shown to the user
            log.exception("background task failed")
            self.relay.failed.emit(exc)
        else:
            self.relay.done.emit(result)


_relays: set[_Relay] = set()


def run_in_background(
    fn: Callable[[], Any],
    on_done: Callable[[Any], None],
    on_error: Callable[[Exception], None],
    owner: QObject | None = None,
) -> None:
    """Run fn on the thread pool; deliver its result or exception on the GUI thread.
    Nothing is delivered once `owner` (the window that asked) has been destroyed."""
    relay = _Relay()
    _relays.add(relay)  # keep alive until the result arrives

    def finish(cb, value):
        _relays.discard(relay)
        if owner is None or shiboken6.isValid(owner):
            cb(value)

    relay.done.connect(lambda r: finish(on_done, r))
    relay.failed.connect(lambda e: finish(on_error, e))
    QThreadPool.globalInstance().start(_Task(fn, relay))


class IndexThread(QThread):
    """Runs Library.index on its own thread; progress crosses to the GUI as signals."""

    progress = Signal(object)
    finished_with = Signal(object)
    failed = Signal(object)

    def __init__(
        self, job: Callable[[Callable[[Progress], None], threading.Event], Progress]
    ) -> None:
        super().__init__()
        self.job = job
        self.cancel_event = threading.Event()

    def run(self) -> None:
        try:
            result = self.job(self._emit, self.cancel_event)
        except Exception as exc:  # noqa: BLE001
            log.exception("indexing failed")
            self.failed.emit(exc)
        else:
            self.finished_with.emit(result)

    def _emit(self, p: Progress) -> None:
        self.progress.emit(replace(p))  # a copy: the job keeps mutating its own

    def cancel(self) -> None:
        self.cancel_event.set()
