"""Progress of an indexing run: counts, the work done, and an ETA from the throughputs
measured so far; one line that the CLI and the window both show."""

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
    work_total: float = 0.0  # bytes of the documents to read (a text page: PAGE_WORK)
    work_done: float = 0.0  # committed documents, plus half of what workers have read
    # Scanned pages, weighed apart: OCR costs what it costs on this machine, learned from
    # the worker seconds of the pages OCR'd so far
    ocr_total: float = 0.0  # pages to OCR: planned, then what the reading found
    ocr_done: float = 0.0
    ocr_seconds: float = 0.0  # worker seconds reading the documents that held them
    ocr_timed: int = 0  # the pages those seconds read
    # What text costs, each half of a document's work timed on its own: core-seconds
    # reading and chunking the documents without scans, and the units of work they were;
    # core-seconds embedding, and the units embedded
    read_s: float = 0.0
    read_units: float = 0.0
    embed_s: float = 0.0
    embed_units: float = 0.0
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
    def scan_weight(self) -> float:
        """A scanned page's work in the units of text (bytes; a text page is PAGE_WORK):
        the seconds one core spends to OCR a page against those it spends to read, chunk
        and embed a unit of text, each as this run has measured it on this machine (a
        half measured alone: reading runs ahead of the embedding, and the cheap half
        alone made a scan weigh 480 text pages)."""
        per_page = self.ocr_seconds / self.ocr_timed if self.ocr_timed else OCR_PAGE_S
        read = self.read_s / self.read_units if self.read_units else READ_PAGE_S / PAGE_WORK
        embed = self.embed_s / self.embed_units if self.embed_units else EMBED_PAGE_S / PAGE_WORK
        return per_page / (read + embed)

    @property
    def fraction(self) -> float:
        """The share of the work behind the run: text by its size, scanned pages each at
        scan_weight."""
        if self.ocr_total > 0:
            k = self.scan_weight
            total = self.work_total + k * self.ocr_total
            return min(1.0, (self.work_done + k * self.ocr_done) / total) if total else 1.0
        if self.work_total > 0:
            return min(1.0, self.work_done / self.work_total)
        return self.done / self.total if self.total else 1.0

    @property
    def eta_s(self) -> float | None:
        """Remaining work at the throughput measured so far (work done per second), so one
        big document does not make the estimate jump six-fold, nor a run of scans, whose
        weight the run learns, make it run late."""
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


# Until the run has timed its own: a scanned page's OCR on one core (Tesseract at 300 dpi,
# about 3 s a page on this 2-core machine), a text page's reading and chunking (0.03 s) and
# its embedding (0.17 core-seconds): 698 pages of manuals here, where a scan weighed 10-14
# text pages.
OCR_PAGE_S = 3.0
READ_PAGE_S = 0.03
EMBED_PAGE_S = 0.17
PAGE_WORK = 3000  # a PDF page's work in the bytes that measure any other file (index.job)


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


ProgressFn = Callable[[Progress], None]
