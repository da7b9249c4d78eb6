"""Progress of an indexing run: counts, the work done in bytes, and an ETA from the
throughput measured so far; one line that the CLI and the window both show."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Progress:
    total: int = 0  # documents in this run
    done: int = 0
    indexed: int = 0
    failed: int = 0
    unsupported: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks: int = 0
    current: str = ""  # the document whose pages were read last
    in_progress: int = 0  # documents being read or waiting to be embedded (state `indexing`)
    reading: int = 0  # of those, the ones a worker is reading now (at most one per worker)
    page: int = 0  # its page progress, for paged documents
    pages: int = 0
    work_total: float = 0.0  # bytes of the documents to read
    work_done: float = 0.0  # committed documents, plus half of what workers have read
    started: float = field(default_factory=time.monotonic)
    cancelled: bool = False
    # Where the time went, in seconds per stage (STAGES); the workers' stages are summed
    # over the workers, which read side by side with the embedding
    stages: dict[str, float] = field(default_factory=dict)
    workers: int = 1
    finished: float | None = None  # when the run ended (monotonic), for `elapsed`

    def spend(self, stage: str, seconds: float) -> None:
        self.stages[stage] = self.stages.get(stage, 0.0) + seconds

    @property
    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    @property
    def fraction(self) -> float:
        if self.work_total > 0:
            return min(1.0, self.work_done / self.work_total)
        return self.done / self.total if self.total else 1.0

    @property
    def eta_s(self) -> float | None:
        """Remaining work at the throughput measured so far (bytes read and committed per
        second), so one big document does not make the estimate jump six-fold."""
        f = self.fraction
        if f <= 0.0 or self.elapsed < 2.0 or self.done >= self.total:
            return None
        return self.elapsed * (1.0 - f) / f

    def describe(self) -> str:
        """One line, the same in the CLI and the window."""
        doc = self.current
        if doc and self.pages > 1:
            doc += f", page {self.page} of {self.pages}"
        if doc and self.in_progress > 1:  # the table shows them all as `indexing`
            waiting = self.in_progress - self.reading
            doc = (f"{self.reading} being read"
                   + (f", {waiting} waiting to be read or embedded" if waiting else "")
                   + f"; {doc}")  # fmt: skip
        eta = self.eta_s
        left = f", about {duration(eta)} left" if eta is not None else ""
        return (f"Indexing {self.done}/{self.total} ({self.fraction:.0%}{left})"
                + (f": {doc}" if doc else ""))  # fmt: skip

    def time_spent(self) -> str:
        """Where the time went, in words ("reading the files 5 min, summed over 2 workers;
        passage vectors 2 min; ...; 9 min in all"), or "" when nothing took a second."""
        said = []
        for stage in STAGES:
            seconds = self.stages.get(stage, 0.0)
            if seconds >= 1.0:
                summed = stage in WORKER_STAGES and self.workers > 1
                said.append(f"{stage} {duration(seconds)}"
                            + (f", summed over {self.workers} workers" if summed else ""))
        if not said:
            return ""
        return "time: " + "; ".join(said) + f"; {duration(self.elapsed)} in all"


# The stages of an indexing run, in order. The first two run in the extraction workers
# (kbapp.index.workers), the others in the indexing process.
READING, CHUNKING = "reading the files", "chunking"
PASSAGES, SENTENCES = "passage vectors", "sentence vectors"
COMMITS, SAVES, CALIBRATION = "commits", "vector index saves", "calibration"
STAGES = (READING, CHUNKING, PASSAGES, SENTENCES, COMMITS, SAVES, CALIBRATION)
WORKER_STAGES = (READING, CHUNKING)


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


ProgressFn = Callable[[Progress], None]
