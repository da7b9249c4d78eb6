"""A PDF page's text in reading order: blocks and lines (two columns read column by
column), words hyphenated at line ends made whole, and each character's box."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import pymupdf

from .pdf_tables import Line, cells_of, table_readings

BLOCK_SEP = "\n\n"
LINE_SEP = " "
MIN_TEXT_CHARS = 20  # fewer characters than this on a page with images: treat as scanned
Box = tuple[float, float, float, float]


@dataclass
class Block:
    start: int  # offset in the page text
    end: int
    bbox: Box
    size: float  # largest font size in the block
    text: str
    lines: list[str] = field(default_factory=list)  # the block's lines as printed


@dataclass
class PageLayout:
    """A page's text in reading order and the box of every character that has one."""

    text: str = ""
    blocks: list[Block] = field(default_factory=list)
    char_boxes: list[Box | None] = field(default_factory=list)
    # Table rows and headers as they are read: (start, end, reading) (extract/pdf_tables.py)
    readings: list[tuple[int, int, str]] = field(default_factory=list)


def _reading_order(blocks: list[dict], width: float) -> list[dict]:
    """Column by column where the page has two columns; top to bottom otherwise."""
    mid = width / 2
    tol = width * 0.02
    left = [b for b in blocks if b["bbox"][2] <= mid + tol]
    right = [b for b in blocks if b["bbox"][0] >= mid - tol]
    two_col = bool(left and right) and any(
        lb["bbox"][1] < rb["bbox"][3] and rb["bbox"][1] < lb["bbox"][3]
        for lb in left
        for rb in right
    )
    by_y = sorted(blocks, key=lambda b: (round(b["bbox"][1]), b["bbox"][0]))
    if not two_col:
        return by_y
    ordered: list[dict] = []
    band: list[dict] = []

    def flush() -> None:
        lcol = [b for b in band if b["bbox"][2] <= mid + tol]
        rcol = [b for b in band if b not in lcol]
        ordered.extend(sorted(lcol, key=lambda b: b["bbox"][1]))
        ordered.extend(sorted(rcol, key=lambda b: b["bbox"][1]))
        band.clear()

    for b in by_y:
        spans_middle = b["bbox"][0] < mid - tol and b["bbox"][2] > mid + tol
        if spans_middle:
            flush()
            ordered.append(b)
        else:
            band.append(b)
    flush()
    return ordered


_BREAK_HYPHENS = "-\u00ad\u2010"  # hyphen-minus, soft hyphen, hyphen


def _broken_word(line: list[tuple[str, Box]], following: list[tuple[str, Box]]) -> bool:
    """A word the line break split with a hyphen: "adip-" then "iscing", lowercase on
    both sides ("Nord-" then "Amerika" keeps its hyphen, as a compound does)."""
    if len(line) < 2 or line[-1][0] not in _BREAK_HYPHENS:
        return False
    if line[-1][0] == "\u00ad":  # a soft hyphen only ever marks a break
        return True
    return line[-2][0].isalpha() and line[-2][0].islower() and following[0][0].islower()


def _letters(chars: list[tuple[str, Box]], start: int, step: int) -> str:
    out = []
    i = start
    while 0 <= i < len(chars) and chars[i][0].isalpha():
        out.append(chars[i][0])
        i += step
    return "".join(out[::step])


def _compounds(lines: Iterable[str]) -> set[str]:
    """The hyphenated compounds the page prints whole on one line ("option-name"), lowercase."""
    return {w for text in lines for w in _COMPOUND.findall(text.lower())}


_COMPOUND = re.compile(r"[^\W\d_]+-[^\W\d_]+")


def _joined(line: list[tuple[str, Box]], following: list[tuple[str, Box]],
            compounds: set[str]) -> str:  # fmt: skip
    """How a line ending in a hyphen meets the next: "" where the break split a word
    ("adip-" "iscing": the hyphen goes), "-" where it fell at a compound's own hyphen
    that the page prints whole elsewhere ("option-" "name" beside "option-name": one word,
    hyphen kept), LINE_SEP for anything else ("Nord-" "Amerika" keeps hyphen and space)."""
    if not _broken_word(line, following):
        return LINE_SEP
    if line[-1][0] != "\u00ad":
        compound = f"{_letters(line, len(line) - 2, -1)}-{_letters(following, 0, 1)}".lower()
        if compound in compounds:
            return "-"
    return ""


def layout_page(page: pymupdf.Page, boxes: bool = True) -> PageLayout:
    """The page's text exactly as kbapp indexes it. The viewer calls this again to turn a
    cited character range into highlight rectangles, so it must stay deterministic.
    `boxes=False`: no per-character boxes (indexing needs none; on a 4,000-page manual they
    are a tuple per character, gigabytes held until the document is done)."""
    raw = page.get_text("rawdict", flags=pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_IMAGES)
    blocks = [b for b in raw["blocks"] if b.get("type") == 0]
    compounds = _compounds("".join(c["c"] for s in line["spans"] for c in s["chars"])
                           for b in blocks for line in b["lines"])  # fmt: skip
    out = PageLayout()
    parts: list[str] = []
    size_so_far = 0  # len("".join(parts))
    printed_lines: list[Line] = []
    for b in _reading_order(blocks, page.rect.width):
        lines: list[list[tuple[str, Box]]] = []
        geometry: list[tuple[float, float, float]] = []  # each line's top, bottom, font size
        size = 0.0
        for line in b["lines"]:
            chars = [(c["c"], tuple(c["bbox"])) for s in line["spans"] for c in s["chars"]]
            line_size = max([0.0] + [s["size"] for s in line["spans"]])
            size = max(size, line_size)
            while chars and chars[-1][0].isspace():
                chars.pop()
            while chars and chars[0][0].isspace():
                chars.pop(0)
            if chars:
                lines.append(chars)
                geometry.append((line["bbox"][1], line["bbox"][3], line_size))
        if not lines:
            continue
        if parts:
            parts.append(BLOCK_SEP)
            size_so_far += len(BLOCK_SEP)
            if boxes:
                out.char_boxes.extend([None] * len(BLOCK_SEP))
        start = size_so_far
        for i, chars in enumerate(lines):
            joint = _joined(lines[i - 1], chars, compounds) if i else LINE_SEP
            if i and joint == "":
                parts[-1] = parts[-1][:-1]  # "adip-" + "iscing" is "adipiscing"
                size_so_far -= 1
                if boxes:
                    out.char_boxes.pop()
            elif i and joint == "-":
                pass  # "option-" + "name" is "option-name": the hyphen stays, no space
            elif i:
                parts.append(LINE_SEP)
                size_so_far += len(LINE_SEP)
                if boxes:
                    out.char_boxes.append(None)
            line_at = size_so_far
            parts.append("".join(c for c, _ in chars))
            size_so_far += len(chars)
            top, bottom, line_size = geometry[i]
            printed_lines.append(Line(line_at, size_so_far, top, bottom, cells_of(chars, line_size)))
            if boxes:
                out.char_boxes.extend(box for _, box in chars)
        end = size_so_far
        text = "".join(parts)[start:end]
        printed = ["".join(c for c, _ in chars) for chars in lines]
        out.blocks.append(Block(start, end, tuple(b["bbox"]), size, text, printed))
    out.text = "".join(parts)
    out.readings = table_readings(printed_lines)
    return out
