"""What a viewer shows for one hit, without Qt: a PDF page's pixels with the cited
characters' rectangles, a sheet's grid with the cited cells, or a window of the canonical
text around the cited range. The window renders these on its engine thread and only
paints them; the CLI or a test can make the same view."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import pymupdf

from .errors import KbError
from .extract.grid import read_grid
from .extract.pdf import layout_page
from .kinds import is_rendered

# The table shows the cited rows and this many more around them.
SHEET_CONTEXT_ROWS = 40
# A text view shows this many characters either side of the cited range: a 50 MB text
# set into a text widget whole would hold the GUI thread for seconds.
TEXT_WINDOW = 200_000


@dataclass(frozen=True)
class Pixels:
    """A rendered page: RGB, 8 bits per channel, `stride` bytes per row."""

    width: int
    height: int
    stride: int
    samples: bytes


def highlight_rects(lib, doc_id: int, pdf_page, page: int, a: int, b: int) -> list[tuple]:
    """Rectangles (page points) of the cited characters on one page, merged per line.
    `pdf_page` is the open PyMuPDF page, the one being rendered."""
    pages = {n: (f, t) for n, f, t in lib.pages(doc_id)}
    if page not in pages:
        return []
    pf, pt = pages[page]
    lo, hi = max(a, pf) - pf, min(b, pt) - pf
    if hi <= lo:
        return []
    boxes = lib.page_boxes(doc_id, page)
    if boxes:  # an OCR'd page: word boxes were stored at index time
        raw = [(x0, y0, x1, y1) for s, e, x0, y0, x1, y1 in boxes if s - pf < hi and e - pf > lo]
    else:
        layout = layout_page(pdf_page)
        raw = [bx for bx in layout.char_boxes[lo:hi] if bx is not None]
    merged: list[list[float]] = []
    for x0, y0, x1, y1 in raw:
        last = merged[-1] if merged else None
        if last and abs(last[1] - y0) < 2 and abs(last[3] - y1) < 2 and x0 >= last[0] - 1:
            last[2] = max(last[2], x1)
        else:
            merged.append([x0, y0, x1, y1])
    return [tuple(r) for r in merged]


def sheet_address(locator: str) -> tuple[str, int, int, int, int] | None:
    """(sheet, first row, last row, first column, last column) of "sheet=S&range=A1:C9"."""
    frag = dict(p.split("=", 1) for p in locator.split("&") if "=" in p)
    m = re.fullmatch(r"([A-Z]+)(\d+)(?::([A-Z]+)(\d+))?", frag.get("range", ""))
    if "sheet" not in frag or not m:
        return None

    def col(letters: str) -> int:
        n = 0
        for ch in letters:
            n = n * 26 + ord(ch) - 64
        return n

    c0, r0 = col(m.group(1)), int(m.group(2))
    c1, r1 = (col(m.group(3)), int(m.group(4))) if m.group(3) else (c0, r0)
    return unquote(frag["sheet"]), r0, r1, c0, c1


@dataclass
class View:
    """What a viewer shows for one hit, made away from the screen (SQLite, MuPDF, the
    format libraries); the window puts it on screen from its GUI thread."""

    hit: object
    mode: str  # "page", "table", "code", "text"
    page: int | None = None
    pages: int = 0
    zoom: float = 1.0
    image: Pixels | None = None
    rects: list[tuple] = field(default_factory=list)
    text: str = ""
    offset: int = 0  # where `text` starts in the canonical text
    grid: list[list[str]] | None = None
    address: tuple | None = None


def prepare_view(lib, hit, page: int | None = None, zoom: float | None = None,
                 width: int = 600) -> View:  # fmt: skip
    """Everything the viewer needs for one hit; runs on the engine thread. `zoom` None
    fits the page to `width` pixels."""
    address = sheet_address(hit.locator) if (hit.locator or "").startswith("sheet=") else None
    if hit.page_from is not None and is_rendered(hit.kind):
        page = page or hit.page_from
        with pymupdf.open(hit.path) as doc:
            total = doc.page_count
            page = max(1, min(page, total))
            pdf_page = doc[page - 1]
            if zoom is None:
                zoom = max(0.5, min(3.0, (width - 24) / pdf_page.rect.width))
            pix = pdf_page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
            rects = highlight_rects(lib, hit.doc_id, pdf_page, page, hit.char_from, hit.char_to)
        img = Pixels(pix.width, pix.height, pix.stride, bytes(pix.samples))
        return View(hit, "page", page, total, zoom, img, rects)
    if address is not None:
        sheet, r0, r1, c0, c1 = address
        try:
            grid = read_grid(Path(hit.path), hit.kind, sheet, r1 + SHEET_CONTEXT_ROWS)
        except (KbError, OSError, ValueError, KeyError):
            grid = None  # moved or changed since: the indexed text is shown instead
        if grid is not None:
            return View(hit, "table", grid=grid, address=address)
    text = lib.text(hit.doc_id)
    lo = max(0, hit.char_from - TEXT_WINDOW)
    if lo:  # start the window on a line boundary, so line numbers and layout stay sane
        lo = text.rfind("\n", 0, lo) + 1
    hi = min(len(text), hit.char_to + TEXT_WINDOW)
    mode = "code" if hit.line_from is not None else "text"
    return View(hit, mode, text=text[lo:hi], offset=lo)
