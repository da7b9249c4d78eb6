"""A sheet's cells as a grid, for the viewer: the cited cells are shown in their table."""

from __future__ import annotations

from pathlib import Path

from ..errors import ExtractionError
from .odf import sheet_rows
from .sheet import cell_text, csv_reader
from .text import decode


def read_grid(path: Path, kind: str, sheet: str, max_row: int, max_col: int = 60,
              ) -> list[list[str]]:  # fmt: skip
    """The first `max_row` rows of one sheet as cell texts (row 1 first). Raises
    ExtractionError (or the format library's own error) if it cannot."""
    grid: list[list[str]] = []

    def put(row: int, col: int, text: str) -> None:
        if row > max_row or col > max_col or not text:
            return
        while len(grid) < row:
            grid.append([])
        line = grid[row - 1]
        while len(line) < col:
            line.append("")
        line[col - 1] = text

    if kind == "csv":
        text, _ = decode(path.read_bytes(), path.name)
        for r, values in enumerate(csv_reader(path, text), start=1):
            if r > max_row:
                break
            for c, v in enumerate(values, start=1):
                put(r, c, cell_text(v))
    elif kind == "xls":
        from .sheet import open_xls, xls_rows

        book = open_xls(path)
        try:
            for r, cells in xls_rows(book, book.sheet_by_name(sheet)):
                if r > max_row:
                    break
                for c, text in cells:
                    put(r, c, text)
        finally:
            book.release_resources()
    elif kind == "xlsx":
        import openpyxl

        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
        try:
            ws = wb[sheet]
            r0, c0 = ws.min_row or 1, ws.min_column or 1
            for i, values in enumerate(ws.iter_rows(max_row=max_row, values_only=True)):
                for j, v in enumerate(values):
                    put(r0 + i, c0 + j, cell_text(v))
        except KeyError as exc:
            raise ExtractionError(f"the workbook has no sheet {sheet!r} any more") from exc
        finally:
            wb.close()
    elif kind == "ods":
        for r, cells in sheet_rows(path, sheet):
            if r > max_row:
                break
            for c, t in cells:
                put(r, c, t)
    return grid
