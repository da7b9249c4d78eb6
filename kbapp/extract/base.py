"""What every extractor returns: one canonical text and the structure found in it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ExtractionError


def over_time_limit(limit: float, where: str = "") -> ExtractionError:
    """The one reason for a document whose reading ran past the time limit, whichever
    side stopped it (the worker itself between pages, or the parent killing it)."""
    return ExtractionError(
        f"reading it took longer than the time limit of {limit:.0f} s{where} and was stopped "
        "(KBAPP_TIME_LIMIT raises it); will retry", retry=True,
    )  # fmt: skip


@dataclass(frozen=True)
class Page:
    """A physical page (1-based) and the canonical-text range it produced."""

    number: int
    char_from: int
    char_to: int
    ocr: bool = False
    ocr_confidence: float | None = None  # mean word confidence 0..100 when OCR'd
    needs_ocr: bool = False  # no text layer and no OCR engine available
    boxes: list[tuple[int, int, float, float, float, float]] | None = None  # OCR words


@dataclass(frozen=True)
class Heading:
    """A heading line: [at, end) is the line in the canonical text; level 1 is the top."""

    at: int
    end: int
    level: int
    title: str


@dataclass
class Extracted:
    text: str
    title: str
    kind: str
    pages: list[Page] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    skip: list[tuple[int, int]] = field(default_factory=list)  # running headers/footers
    warnings: list[str] = field(default_factory=list)
    retry: bool = False  # part of it failed for a passing reason: read it again later

    @property
    def ocr_pages(self) -> int:
        return sum(1 for p in self.pages if p.ocr)

    @property
    def ocr_confidence(self) -> float | None:
        confs = [p.ocr_confidence for p in self.pages if p.ocr and p.ocr_confidence is not None]
        return sum(confs) / len(confs) if confs else None
