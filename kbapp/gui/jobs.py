"""The indexing job on its own QThread, with progress, cancel and a result as signals.
(Every other engine call of the window goes through engine.Engine.)"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import QThread, Signal

from ..index import Progress

log = logging.getLogger(__name__)


class IndexThread(QThread):
    """Runs Library.index on its own thread; progress crosses to the GUI as signals."""

    progress = Signal(object)
    finished_with = Signal(object)
    failed = Signal(object)

    def __init__(
        self, job: Callable[[Callable[[Progress], None], threading.Event], object]
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
