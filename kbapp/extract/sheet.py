"""Spreadsheets (XLSX, ODS, CSV): each sheet a section, each row rendered with its header.

A row becomes one line of the canonical text, "Header: value | Header: value", so a chunk
of rows stays readable on its own, and remembers where it came from (sheet, row, columns)
so a citation can name its A1 range ("Budget!A12:F30"). Formulas give their cached values.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

from ..errors import ExtractionError
from .base import Builder, Extracted, SheetRow
from .package import check_package
from .text import decode, title_from_name

# A sheet rendered past this many characters stops there with a warning: a data dump of a
# million rows is not something a person searches in sentences.
MAX_SHEET_CHARS = 20_000_000

Row = tuple[int, list[tuple[int, str]]]  # (1-based row, [(1-based column, text)])


# Between a row's cells in every table kbapp reads (sheets, Word/ODF/slide tables, HTML).
CELL_SEP = " | "

def column_letter(n: int) -> str:
    s = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        s = chr(65 + r) + s
    return s


def a1_range(sheet: str, row_from: int, row_to: int, col_from: int, col_to: int) -> str:
    a = f"{column_letter(col_from)}{row_from}"
    b = f"{column_letter(col_to)}{row_to}"
    return a if a == b else f"{a}:{b}"


def sheet_locator(rows: list[SheetRow]) -> tuple[str, str]:
    """The fragment and the label of a run of rows of one sheet."""
    sheet = rows[0].sheet
    rng = a1_range(
        sheet, min(r.row for r in rows), max(r.row for r in rows),
        min(r.col_from for r in rows), max(r.col_to for r in rows),
    )  # fmt: skip
    return f"sheet={quote(sheet, safe='')}&range={rng}", f"{sheet}!{rng}"


def cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time(0) else value.isoformat(" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return " ".join(str(value).split())


def render_row(header: dict[int, str], cells: list[tuple[int, str]]) -> str:
    """A row with each value named by its column's header ("Cost: 1200")."""
    return CELL_SEP.join(
        f"{header[c]}: {t}" if header.get(c) and header[c] != t else t for c, t in cells
    )


def table_lines(rows: list[list[str]]) -> list[str]:
    """A document's table (Word, PowerPoint, OpenDocument) as lines: the first non-empty
    row as the header, each later row with its values named by it."""
    lines: list[str] = []
    header: dict[int, str] | None = None
    for row in rows:
        cells = [(i, " ".join(t.split())) for i, t in enumerate(row) if t and t.strip()]
        if not cells:
            continue
        if header is None:
            header = dict(cells)
            lines.append(CELL_SEP.join(t for _, t in cells))
        else:
            lines.append(render_row(header, cells))
    return lines


def add_sheet(b: Builder, name: str, rows: Iterable[Row], warnings: list[str]) -> None:
    """Render one sheet: its name as a heading, the header row, then each row with it."""
    b.block(name, level=1)
    header: dict[int, str] | None = None
    start = b.size
    for number, cells in rows:
        cells = [(c, t) for c, t in cells if t]
        if not cells:
            continue
        if header is None:
            header = dict(cells)
            line = CELL_SEP.join(t for _, t in cells)
        else:
            line = render_row(header, cells)
        a, z = b.block(line)
        b.rows.append(SheetRow(a, z, name, number, cells[0][0], cells[-1][0]))
        if b.size - start > MAX_SHEET_CHARS:
            warnings.append(f"sheet {name!r} is very large: only rows up to {number} were read")
            return


def extract_xlsx(path: Path) -> Extracted:
    import openpyxl

    check_package(path, "XLSX")
    try:
        # keep_links=False: a workbook's links to other files (DDE) are not its words, and
        # one whose link part is missing failed the whole file
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True, keep_links=False)
    except Exception as exc:  # openpyxl raises many kinds on a damaged package
        raise ExtractionError(f"not a valid XLSX: {exc}") from exc
    b, warnings = Builder(), []
    try:
        for ws in wb.worksheets:
            r0, c0 = ws.min_row or 1, ws.min_column or 1

            def rows(ws=ws, r0=r0, c0=c0) -> Iterable[Row]:
                for i, values in enumerate(ws.iter_rows(values_only=True)):
                    yield r0 + i, [(c0 + j, cell_text(v)) for j, v in enumerate(values)]

            add_sheet(b, ws.title, rows(), warnings)
        title = (wb.properties.title or "").strip() or title_from_name(path)
    finally:
        wb.close()
    return b.extracted(title, "xlsx", warnings)


def _xls_value(cell, datemode: int) -> object:
    import xlrd

    if cell.ctype == xlrd.XL_CELL_DATE:
        try:
            return xlrd.xldate_as_datetime(cell.value, datemode)
        except (ValueError, OverflowError, xlrd.xldate.XLDateError):
            return cell.value
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return bool(cell.value)
    if cell.ctype == xlrd.XL_CELL_ERROR:
        return None
    return cell.value


def open_xls(path: Path):
    """An Excel 97-2003 workbook, read with xlrd (cached formula values, as for XLSX)."""
    import xlrd

    try:
        return xlrd.open_workbook(str(path), on_demand=True)
    except Exception as exc:  # xlrd raises XLRDError, CompDocError, struct errors...
        detail = str(exc) or type(exc).__name__
        if "encrypt" in detail.lower():
            raise ExtractionError("the workbook is password-protected") from exc
        raise ExtractionError(f"not a valid XLS: {detail}") from exc


def xls_rows(book, sheet) -> Iterable[Row]:
    for r in range(sheet.nrows):
        yield r + 1, [(c + 1, cell_text(_xls_value(cell, book.datemode)))
                      for c, cell in enumerate(sheet.row(r))]  # fmt: skip


def extract_xls(path: Path) -> Extracted:
    book = open_xls(path)
    b, warnings = Builder(), []
    try:
        for i in range(book.nsheets):
            sheet = book.sheet_by_index(i)
            add_sheet(b, sheet.name, xls_rows(book, sheet), warnings)
            book.unload_sheet(i)
    finally:
        book.release_resources()
    return b.extracted(title_from_name(path), "xls", warnings)


def csv_reader(path: Path, text: str):
    delimiter = "\t" if path.suffix.lower() == ".tsv" else None
    if delimiter is None:
        try:
            delimiter = csv.Sniffer().sniff(text[:20000], delimiters=",;\t|").delimiter
        except csv.Error:
            delimiter = ","
    return csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)


def extract_csv(path: Path, data: bytes | None = None) -> Extracted:
    text, warnings = decode(data if data is not None else path.read_bytes(), path.name)
    reader = csv_reader(path, text)
    b = Builder()
    name = path.stem or path.name

    def rows() -> Iterable[Row]:
        try:
            for i, values in enumerate(reader, start=1):
                yield i, [(j, cell_text(v)) for j, v in enumerate(values, start=1)]
        except csv.Error as exc:
            warnings.append(f"the CSV is malformed after row {reader.line_num}: {exc}")

    add_sheet(b, name, rows(), warnings)
    return b.extracted(title_from_name(path), "csv", warnings)

