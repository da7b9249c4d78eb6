"""What a chunker makes: passages (`Chunk`) with offsets into the canonical text, and the
small rules every chunker shares (a thin passage, trimming, the passage header)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from ..config import ChunkOptions
from ..words import letter_words

TokenCounter = Callable[[str], int]
DEFAULT_OPTIONS = ChunkOptions()


@dataclass(frozen=True)
class Chunk:
    seq: int
    section: str
    char_from: int
    char_to: int
    content: str
    text: str
    page_from: int | None = None
    page_to: int | None = None
    tokens: int | None = None
    locator: str | None = None  # the source's own address: "sheet=S&range=A1:C9", "line=10,20" (lines 10 to 20)
    symbol: str | None = None  # code: the definition(s) the chunk holds
    line_from: int | None = None  # code: 1-based first and last line
    line_to: int | None = None
    # The passage as it is read when that is not its printed content: table rows with
    # their headers (Extracted.readings). `text` is the header and this.
    body: str | None = None

    @property
    def said(self) -> str:
        return self.body if self.body is not None else self.content


@dataclass
class Chunked:
    chunks: list[Chunk] = field(default_factory=list)
    split_for_window: int = 0
    header_tokens: int = 0
    total_tokens: int = 0


MIN_WORDS = 3


def word_count(content: str) -> int:
    """Words in content, counted up to MIN_WORDS (enough to know it is not thin)."""
    return sum(1 for _ in itertools.islice(letter_words(content), MIN_WORDS))


def thin(content: str) -> bool:
    """Too few words to stand alone as a passage."""
    return word_count(content) < MIN_WORDS


def trim(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def header(title: str, section: str) -> str:
    return f"[{title} > {section}]\n" if section else f"[{title}]\n"
