"""What every extractor returns: one canonical text and the structure found in it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..errors import ExtractionError
from ..paths import printable


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


@dataclass(frozen=True)
class SheetRow:
    """One spreadsheet row as rendered: [char_from, char_to) in the canonical text."""

    char_from: int
    char_to: int
    sheet: str
    row: int  # 1-based, as the spreadsheet numbers it
    col_from: int  # 1-based columns of its first and last non-empty cell
    col_to: int


@dataclass(frozen=True)
class Symbol:
    """A definition in source code: [at, end) in the text; depth 0 is top level."""

    at: int
    end: int
    name: str
    kind: str  # "function", "class", "method", ...
    depth: int = 0


# What a skipped range is: a page's running head or foot, a bare page number, a table of
# contents or index entry (dot leaders). Headings are excluded from passages by themselves.
RUNNING_HEAD, PAGE_NUMBER, CONTENTS = "running head", "page number", "contents"
SKIP_KINDS = (RUNNING_HEAD, PAGE_NUMBER, CONTENTS)


@dataclass
class Extracted:
    text: str
    title: str
    kind: str
    pages: list[Page] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    # Ranges kept in the canonical text but never chunked: (from, to, one of SKIP_KINDS).
    skip: list[tuple[int, int, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    retry: bool = False  # part of it failed for a passing reason: read it again later
    rows: list[SheetRow] = field(default_factory=list)  # spreadsheets
    symbols: list[Symbol] | None = None  # source code (None: not code)
    # Ranges read in another form than they print: a PDF table row with its headers,
    # (from, to, reading), sorted and disjoint (extract/pdf_tables.py). The text cited and
    # highlighted stays the printed one; passages are embedded and indexed as read.
    readings: list[tuple[int, int, str]] = field(default_factory=list)
    language: str | None = None

    def __post_init__(self) -> None:
        # Lone surrogates (a mail's broken UTF-7 header) become U+FFFD and control
        # characters spaces, one code point for one, so every offset stays true.
        self.text = printable(self.text)
        self.title = " ".join(printable(self.title).split())
        self.headings = [
            replace(h, title=" ".join(printable(h.title).split())) for h in self.headings
        ]

    @property
    def ocr_pages(self) -> int:
        return sum(1 for p in self.pages if p.ocr)

    @property
    def ocr_confidence(self) -> float | None:
        confs = [p.ocr_confidence for p in self.pages if p.ocr and p.ocr_confidence is not None]
        return sum(confs) / len(confs) if confs else None


class Builder:
    """Builds a canonical text block by block, keeping headings, numbered parts (pages,
    slides, messages) and spreadsheet rows at their offsets. Blocks are separated by a
    blank line, so the chunker sees each block as a paragraph."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.headings: list[Heading] = []
        self.pages: list[Page] = []
        self.rows: list[SheetRow] = []
        self.skip: list[tuple[int, int, str]] = []
        self._unit: tuple[int, int] | None = None

    def block(self, text: str, level: int = 0, sep: str = "\n\n") -> tuple[int, int]:
        """Append one block (a paragraph, a table row, a heading when level > 0)."""
        text = text.strip()
        if not text:
            return self.size, self.size
        if level:
            text = " ".join(text.split())
        if self.parts:
            self.parts.append(sep)
            self.size += len(sep)
        at = self.size
        self.parts.append(text)
        self.size += len(text)
        if level:
            self.headings.append(Heading(at, self.size, level, text))
        return at, self.size

    def start_unit(self, number: int) -> None:
        self.end_unit()
        self._unit = (number, self.size + (2 if self.parts else 0))

    def end_unit(self) -> None:
        if self._unit is not None:
            number, at = self._unit
            self.pages.append(Page(number, min(at, self.size), self.size))
            self._unit = None

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def extracted(self, title: str, kind: str, warnings: list[str] | None = None) -> Extracted:
        self.end_unit()
        return Extracted(
            text=self.text, title=title, kind=kind, pages=self.pages, headings=self.headings,
            skip=self.skip, warnings=warnings or [], rows=self.rows,
        )  # fmt: skip
