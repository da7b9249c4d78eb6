"""Tables on a PDF page, read as rows with their headers.

A financial statement or a statistics table prints its numbers in columns, the column
headers (the periods, "2019", "Q3", "Highways and streets") once at the top and each row's
label once at its left: "Total current assets 4,020 3,954". The printed text stays what
kbapp cites and highlights; each row is *read* (embedded, and indexed for keywords) as
"Total current assets | 2019: 4,020 | 2018: 3,954", so "total current assets in 2019"
finds the row, as a spreadsheet's rows are read with their header (extract/sheet.py).

Found from the lines' geometry alone (no second pass over the page): a line is cut into
cells where the gap between two characters is wider than a word space; a table is a run of
at least MIN_ROWS rows, each with at least two number cells, whose number cells line up in
columns; its headers are the rows just above the first such row whose cells sit over those
columns.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from .sheet import CELL_SEP

MIN_ROWS = 3
# A gap between two printed characters wider than this many font sizes separates cells
# (a word space is about a quarter of the size; a justified line rarely stretches it past
# one half).
CELL_GAP = 0.9
HEADER_ROWS = 3  # header lines looked at above a table's first row of numbers

_NUMBER = re.compile(
    r"^[(\[]?[-+\u2212\u2013]?[$€£¥]?\s?(?:\d[\d,.\u202f\u00a0]*\d|\d)(?:\s?%)?[)\]]?[*†]?$|^[-\u2013\u2014]$"
)


_RULE = re.compile(r"[-\u2013\u2014_=~.·*+ ]{2,}")
_CURRENCY = {"$", "€", "£", "¥", "US$", "USD", "EUR"}


@dataclass
class Cell:
    text: str
    x0: float
    x1: float

    @property
    def number(self) -> bool:
        return _NUMBER.match(self.text) is not None


@dataclass
class Line:
    """A printed line: [start, end) in the page text, its box and its cells."""

    start: int
    end: int
    y0: float
    y1: float
    cells: list[Cell]


@dataclass
class _Row:
    lines: list[Line]
    cells: list[Cell] = field(default_factory=list)

    @property
    def y0(self) -> float:
        return min(ln.y0 for ln in self.lines)

    @property
    def y1(self) -> float:
        return max(ln.y1 for ln in self.lines)

    @property
    def numbers(self) -> list[Cell]:
        return [c for c in self.cells if c.number]


def cells_of(chars: list[tuple[str, tuple[float, float, float, float]]], size: float) -> list[Cell]:
    """A line's characters cut into cells: at gaps wider than CELL_GAP font sizes, and
    between two numbers ("1970 23,653.2" is a year and an amount, however close)."""
    words: list[Cell] = []
    text: list[str] = []
    x0 = x1 = 0.0
    for ch, box in chars:
        if ch.isspace():
            if text:
                words.append(Cell("".join(text), x0, x1))
                text = []
            continue
        if text and box[0] - x1 > 0.5 * max(size, 1.0):
            words.append(Cell("".join(text), x0, x1))
            text = []
        if not text:
            x0 = box[0]
        text.append(ch)
        x1 = box[2]
    if text:
        words.append(Cell("".join(text), x0, x1))
    cells: list[Cell] = []
    gap = CELL_GAP * max(size, 1.0)
    for w in words:
        last = cells[-1] if cells else None
        if last is not None and (last.text in _CURRENCY or (
            w.x0 - last.x1 <= gap and not (last.number and w.number)
        )):  # a "$" set apart at the column's left edge belongs to its amount
            cells[-1] = Cell(f"{last.text} {w.text}", last.x0, w.x1)
        else:
            cells.append(w)
    return cells


def _rows(lines: list[Line]) -> list[_Row]:
    """Lines side by side (their vertical extents overlap by half) are one row, top down."""
    rows: list[_Row] = []
    for ln in sorted(lines, key=lambda ln: (ln.y0, ln.cells[0].x0 if ln.cells else 0)):
        h = max(ln.y1 - ln.y0, 0.1)
        for row in rows[-3:]:
            overlap = min(row.y1, ln.y1) - max(row.y0, ln.y0)
            if overlap > 0.5 * min(h, row.y1 - row.y0):
                row.lines.append(ln)
                break
        else:
            rows.append(_Row([ln]))
    for row in rows:
        row.cells = sorted((c for ln in row.lines for c in ln.cells), key=lambda c: c.x0)
    return rows


def _overlaps(a: Cell, lo: float, hi: float) -> bool:
    return a.x0 < hi and lo < a.x1


def _columns(rows: list[_Row]) -> list[tuple[float, float]]:
    """The x-ranges of the number columns: number cells that overlap are one column."""
    spans = sorted((c.x0, c.x1) for r in rows for c in r.numbers)
    out: list[list[float]] = []
    for lo, hi in spans:
        if out and lo < out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(lo, hi) for lo, hi in out]


def _fits(row: _Row, columns: list[tuple[float, float]]) -> bool:
    """Each of the row's number cells sits in one column."""
    return all(sum(_overlaps(c, lo, hi) for lo, hi in columns) == 1 for c in row.numbers)


def _label(row: _Row, first: float) -> str:
    return " ".join(c.text for c in row.cells if c.x1 <= first and not c.number)


def _headers(above: list[_Row], columns: list[tuple[float, float]], left: float) -> list[str]:
    """Each column's header: the text of the header lines' cells over it, top down."""
    heads = [""] * len(columns)
    for row in above:
        for c in row.cells:
            over = [i for i, (lo, hi) in enumerate(columns) if _overlaps(c, lo, hi)]
            if not over and c.x0 >= left:  # a header a little beside its column's numbers
                mid = (c.x0 + c.x1) / 2
                over = [min(range(len(columns)),
                            key=lambda i: abs((columns[i][0] + columns[i][1]) / 2 - mid))]  # fmt: skip
            for i in over:
                heads[i] = f"{heads[i]} {c.text}".strip()
    return heads


def _reading(label: str, cells: list[Cell], columns: list[tuple[float, float]],
             heads: list[str]) -> str:  # fmt: skip
    parts = [label] if label else []
    for c in cells:
        if not c.number and label and c.x1 <= columns[0][0]:
            continue  # the label, said already
        i = next((i for i, (lo, hi) in enumerate(columns) if _overlaps(c, lo, hi)), None)
        head = heads[i] if i is not None else ""
        parts.append(f"{head}: {c.text}" if head and head != c.text else c.text)
    return CELL_SEP.join(parts)


def _is_header_row(row: _Row, columns: list[tuple[float, float]], left: float) -> bool:
    """A line above the numbers that names columns: short cells, at least one over a
    column, none a caption (from the table's left edge across two columns or more)."""
    if not row.cells or any(len(c.text) > 60 for c in row.cells):
        return False
    for c in row.cells:
        spans = sum(_overlaps(c, lo, hi) for lo, hi in columns)
        if spans >= 2 and c.x0 <= left + 1:
            return False
    return any(_overlaps(c, lo, hi) for c in row.cells for lo, hi in columns)


def _run(rows: list[_Row], i: int) -> tuple[int, list[_Row]]:
    """The run of rows from rows[i] (a row of two numbers or more) whose numbers share
    columns, with the rows of a label alone between them; and where it ends."""
    j, body = i, []
    columns = _columns([rows[i]])
    while j < len(rows):
        r = rows[j]
        if r.numbers:
            trial = _columns([*[b for b in body if b.numbers], r])
            if len(trial) > max(len(columns), len(r.numbers)) + 1 and body:
                break  # the numbers no longer line up with the table's
            columns = trial
        elif not (body and r.cells and r.cells[-1].x1 <= columns[0][0] + 1):
            break  # a line across the columns: the table is over
        body.append(r)  # numbers, or a label alone: a group's name or a wrapped label
        j += 1
    return j, body


def _labelled(body: list[_Row], columns: list[tuple[float, float]]) -> list[tuple[_Row, str]]:
    """Each row of numbers with its label: a label that wrapped onto the next line is
    whole again, and a group's name on a line of its own ("Current assets:") is said
    before the label of each row under it."""
    entries: list[tuple[_Row, str]] = []
    group = ""
    for r in body:
        label = _label(r, columns[0][0])
        if r.numbers:
            entries.append((r, f"{group} {label}".strip() if label else label))
            continue
        prev, said = entries[-1] if entries else (None, "")
        if prev is not None and said and _goes_on(said, label) and (
            r.y0 - prev.y1 < 0.35 * (prev.y1 - prev.y0)
        ):
            prev.lines.extend(r.lines)
            entries[-1] = (prev, f"{said}{label}" if said.endswith("-") else f"{said} {label}")
        else:
            group = label
    return entries


def table_readings(lines: list[Line]) -> list[tuple[int, int, str]]:
    """(start, end, reading) for every table row and header on the page, in page-text
    offsets; a row whose lines are not one stretch of the page text is left as printed."""
    # a rule drawn with characters ("------  ---") separates, it says nothing
    rows = _rows([ln for ln in lines if ln.cells and not all(_RULE.fullmatch(c.text) for c in ln.cells)])
    starts = sorted(ln.start for ln in lines)
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(rows):
        if len(rows[i].numbers) < 2:
            i += 1
            continue
        j, body = _run(rows, i)
        numbered = [r for r in body if len(r.numbers) >= 2]
        columns = _columns(numbered)
        if len(numbered) < MIN_ROWS or len(columns) < 2 or not all(_fits(r, columns) for r in numbered):
            i = max(j, i + 1)
            continue
        left = min(c.x0 for r in body for c in r.cells)
        above = []
        k = i - 1
        while k >= 0 and len(above) < HEADER_ROWS and _is_header_row(rows[k], columns, left):
            above.insert(0, rows[k])
            k -= 1
        heads = _headers(above, columns, left)
        # a first row that only names periods or versions ("2019 2018", "Python version
        # 3.4 3.5 3.6") is the header
        first = body[0]
        if _names_periods(first, columns) and len(body) >= MIN_ROWS:
            heads = [f"{h} {c.text}".strip() for h, c in zip(heads, _by_column(first, columns), strict=True)]
            above.append(first)
            body = body[1:]
        if any(heads) and above:  # the header lines read as one, however they wrap
            _emit(out, _Row([ln for r in above for ln in r.lines]), CELL_SEP.join(h for h in heads if h), starts)
        entries = _labelled(body, columns)
        for r, label in entries:
            _emit(out, r, _reading(label, r.cells, columns, heads), starts)
        i = max(j, i + 1)
    return out


_PERIOD = re.compile(r"(?:19|20)\d\d|\d{1,2}\.\d{1,2}")


def _names_periods(row: _Row, columns: list[tuple[float, float]]) -> bool:
    """Years or version numbers in even steps, one to a column, under at most a short name."""
    label = _label(row, columns[0][0])
    cells = row.numbers
    if len(label.split()) > 3 or len(cells) < 2 or not all(_PERIOD.fullmatch(c.text) for c in cells):
        return False
    # in even steps, as periods are counted ("2019 2018 2017", "3.4 3.5 3.6"); figures
    # almost never are
    keys = [int(c.text.replace(".", "")) for c in cells]
    steps = {b - a for a, b in zip(keys, keys[1:], strict=False)}
    return len(steps) == 1 and 0 not in steps


def _goes_on(label: str, line: str) -> bool:
    """Is `line` the rest of a label that wrapped ("Unemployment" / "rate (%)"), not the
    name of the group under it ("Current liabilities:")?"""
    if line.endswith(":"):
        return False
    return label.endswith("-") or line[:1].islower() or line[:1] in "(&/,"


def _by_column(row: _Row, columns: list[tuple[float, float]]) -> list[Cell]:
    cells = []
    for lo, hi in columns:
        cells.append(next((c for c in row.numbers if _overlaps(c, lo, hi)), Cell("", lo, hi)))
    return cells


def _emit(out: list[tuple[int, int, str]], row: _Row, reading: str, starts: list[int]) -> None:
    """The row's reading over its printed stretch, when its lines are one stretch of the
    page text with no other line inside and no earlier reading overlaps it."""
    a = min(ln.start for ln in row.lines)
    b = max(ln.end for ln in row.lines)
    if (out and a < out[-1][1]) or bisect.bisect_left(starts, b) - bisect.bisect_left(starts, a) != len(row.lines):
        return
    out.append((a, b, reading))
