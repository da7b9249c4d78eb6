"""Extraction in worker processes: one per core by default, as PyMuPDF's own docs advise.

Each worker is a spawned Python process that extracts one document at a time and sends
back the Extracted result (or the reason it failed), with page progress on the way.
Because the work runs in another process, a time limit really stops it (the worker and
its Tesseract child are killed as a process group), a document that crashes MuPDF fails
alone ("the file crashed the PDF reader") while the other workers go on, cancel is
immediate, and the indexer never shares a MuPDF instance with the window's viewer.
Workers die with their parent (PR_SET_PDEATHSIG) and keep OCR scratch files in a
private folder (extract/ocr.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing as mp
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path

from ..chunk import Chunked, chunk_document
from ..config import ChunkOptions
from ..errors import ExtractionError, KbError
from ..extract.base import Extracted, over_time_limit

log = logging.getLogger(__name__)

# Workers run at a lower CPU priority, as desktop indexers do: on a busy machine the window
# (and the embedder that feeds search) get the cores first. With the real model and every
# worker busy, the window's longest stall went 143 -> 75 ms (tools/gui_stall.py --real).
WORKER_NICE = 10


@dataclass(frozen=True)
class Task:
    key: int
    path: str
    ocr_language: str
    ocr_timeout: float | None
    time_limit: float | None
    max_text_bytes: int
    # Chunked here too when the encoder's count pickles: the embedding process then runs
    # no chunking, so the window it shares with the app keeps the interpreter to itself.
    chunk: ChunkOptions | None = None
    count_tokens: Callable[[str], int] | None = None
    window: int | None = None


@dataclass(frozen=True)
class PageDone:
    key: int
    done: int
    total: int


@dataclass(frozen=True)
class Done:
    key: int
    extracted: Extracted | None
    error: KbError | OSError | None = None
    unexpected: str | None = None  # a bug's "Type: message", logged by the parent
    chunked: Chunked | None = None  # when the task asked for it
    extract_s: float = 0.0  # the worker's seconds reading the document, and chunking it
    chunk_s: float = 0.0


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:  # pragma: no cover - not Linux
        pass


def _worker(conn: Connection) -> None:
    import tempfile

    os.setpgrp()  # a kill of the group takes Tesseract with it
    _die_with_parent()
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICE)
    # SIGTERM (the parent died, or cancel): take the whole group down, Tesseract included.
    signal.signal(signal.SIGTERM, lambda *_: os.killpg(os.getpgrp(), signal.SIGKILL))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the parent's to handle
    import kbapp  # noqa: F401 - the import-time settings (telemetry off, unused parts out)

    from ..extract import extract  # noqa: F401 - loaded before "ready": no document pays the import
    from ..extract.ocr import private_tempdir

    tempfile.tempdir = private_tempdir()
    conn.send("ready")
    while True:
        try:
            task: Task | None = conn.recv()
        except EOFError:
            return
        if task is None:
            return

        def page(done: int, total: int, key: int = task.key) -> None:
            conn.send(PageDone(key, done, total))

        conn.send(_work(task, page))


def _work(task: Task, on_page) -> Done:
    """One document read (and chunked, when asked), or the reason it could not be."""
    from ..extract import extract

    try:
        t = time.perf_counter()
        ex = extract(Path(task.path), task.ocr_language, task.ocr_timeout, task.time_limit,
                     task.max_text_bytes, on_page=on_page)  # fmt: skip
        t_read = time.perf_counter()
        chunked = None
        if task.chunk is not None:
            chunked = chunk_document(ex, task.chunk, task.count_tokens, task.window)
        return Done(task.key, ex, chunked=chunked, extract_s=t_read - t,
                    chunk_s=time.perf_counter() - t_read)  # fmt: skip
    except (KbError, OSError) as exc:
        return Done(task.key, None, exc)
    except Exception as exc:  # noqa: BLE001 - a bug on one file must not stop the folder
        return Done(task.key, None, None, f"{type(exc).__name__}: {exc}")


class _Worker:
    def __init__(self, ctx) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child,), daemon=True, name="kbapp-extract")
        self.proc.start()
        child.close()
        self.tasks: deque[Task] = deque()  # sent, not yet answered
        self.started: float | None = None  # when the current (first) task began
        self.ready = False  # it has started and said so

    def send(self, task: Task) -> None:
        if not self.tasks:
            self.started = time.monotonic()
        self.tasks.append(task)
        with contextlib.suppress(OSError):  # it died: the sentinel tells, and its task fails
            self.conn.send(task)

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)
        self.proc.join(2)
        if self.proc.is_alive():
            self.kill()
        else:
            self.conn.close()


class ExtractPool:
    """Submit tasks, then iterate events(): PageDone and Done, in completion order."""

    def __init__(self, workers: int, depth: int = 2) -> None:
        self.size = max(1, workers)
        self.depth = depth  # tasks in flight per worker: the next one waits in its pipe
        self._ctx = mp.get_context("spawn")  # never fork a process that runs torch threads
        self._workers: list[_Worker] = []
        self._queue: deque[Task] = deque()

    def __enter__(self) -> ExtractPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def free(self) -> int:
        """How many more tasks fit in flight."""
        return max(1, self.size) * self.depth - self.in_flight - len(self._queue)

    @property
    def in_flight(self) -> int:
        return sum(len(w.tasks) for w in self._workers)

    def busy(self) -> bool:
        return bool(self._queue) or self.in_flight > 0

    def submit(self, task: Task) -> None:
        self._queue.append(task)
        self._dispatch()

    def _dispatch(self) -> None:
        if self.size == 0:  # no worker can start here: nothing is sent anywhere
            return
        while self._queue:
            # A new worker before a second task for a busy one: two documents, two cores.
            if all(w.tasks for w in self._workers) and len(self._workers) < self.size:
                self._workers.append(_Worker(self._ctx))
                continue
            room = [w for w in self._workers if len(w.tasks) < self.depth]
            if not room:
                return
            worker = min(room, key=lambda w: len(w.tasks))
            worker.send(self._queue.popleft())

    def _replace(self, worker: _Worker) -> list[Task]:
        """Kill a worker; return the tasks it had queued behind the current one."""
        worker.kill()
        self._workers.remove(worker)
        return list(worker.tasks)[1:]

    def events(self, timeout: float = 0.5) -> Iterator[PageDone | Done]:
        """What happened within `timeout` seconds (possibly nothing)."""
        if self.size == 0:
            while self._queue:
                yield from _in_process(self._queue.popleft())
            return
        self._dispatch()
        conns = {w.conn: w for w in self._workers}
        sentinels = {w.proc.sentinel: w for w in self._workers}
        if not conns:
            return
        ready = wait([*conns, *sentinels], timeout)
        for obj in ready:
            worker = conns.get(obj)
            if worker is None or worker not in self._workers:
                continue
            try:
                while worker.conn.poll():
                    msg = worker.conn.recv()
                    if msg == "ready":
                        worker.ready = True
                        continue
                    if isinstance(msg, Done):
                        worker.tasks.popleft()
                        worker.started = time.monotonic() if worker.tasks else None
                    yield msg
            except (EOFError, OSError):
                pass  # it died: the sentinel below says so
        now = time.monotonic()
        for worker in list(self._workers):
            if not worker.tasks:
                continue
            task = worker.tasks[0]
            alive = worker.proc.is_alive()  # asked once: it may die between two questions
            if not alive and not worker.ready:
                # It never started (no Python to run, no memory, a script that indexes at
                # import time): no worker will. Every task sent or queued is read here.
                log.warning("extraction workers cannot start (exit %s); reading in-process",
                            worker.proc.exitcode)  # fmt: skip
                tasks = [t for w in self._workers for t in w.tasks]
                for w in self._workers:
                    w.kill()
                self._workers.clear()
                self._queue.extendleft(reversed(tasks))
                self.size = 0
                while self._queue:
                    yield from _in_process(self._queue.popleft())
                return
            if not alive:
                code = worker.proc.exitcode
                how = f"signal {-code}" if code is not None and code < 0 else f"exit {code}"
                self._queue.extendleft(reversed(self._replace(worker)))
                yield Done(task.key, None, ExtractionError(
                    f"the file crashed the document reader ({how}); it is left out and the "
                    "rest goes on", retry=False))  # fmt: skip
            elif task.time_limit and worker.started and now - worker.started > task.time_limit:
                self._queue.extendleft(reversed(self._replace(worker)))
                yield Done(task.key, None, over_time_limit(task.time_limit))
        self._dispatch()

    def cancel(self) -> None:
        """Stop at once: every worker is killed, queued tasks dropped."""
        self._queue.clear()
        for w in self._workers:
            w.kill()
        self._workers.clear()

    def close(self) -> None:
        self._queue.clear()
        for w in self._workers:
            w.close()
        self._workers.clear()


def _in_process(task: Task) -> Iterator[PageDone | Done]:
    """The fallback where no worker process can start: the same work, here."""
    pages: list[PageDone] = []
    done = _work(task, lambda d, t: pages.append(PageDone(task.key, d, t)))
    yield from pages
    yield done


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1))  # fmt: skip

