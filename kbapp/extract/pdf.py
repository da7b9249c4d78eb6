"""PDF (and the other paged formats MuPDF reads: EPUB, XPS, FB2, CBZ, images).

Page by page; the page -> character-range map is kept. Pages without a usable text layer
are rendered and OCR'd. Two-column pages are read column by column. Running headers and
footers are found across pages and excluded from chunking (they stay in the canonical
text, so no offset moves).
"""

from __future__ import annotations

import bisect
import logging
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from ..errors import ExtractionError
from ..words import fold
from .base import CONTENTS, PAGE_NUMBER, RUNNING_HEAD, Extracted, Heading, Page, over_time_limit
from .ocr import OCR_DPI, OcrFailed, OcrUnavailable, ocr_image
from .text import title_from_name

log = logging.getLogger(__name__)

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


def layout_page(page: pymupdf.Page, boxes: bool = True) -> PageLayout:
    """The page's text exactly as kbapp indexes it. The viewer calls this again to turn a
    cited character range into highlight rectangles, so it must stay deterministic.
    `boxes=False`: no per-character boxes (indexing needs none; on a 4,000-page manual they
    are a tuple per character, gigabytes held until the document is done)."""
    raw = page.get_text("rawdict", flags=pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_IMAGES)
    blocks = [b for b in raw["blocks"] if b.get("type") == 0]
    out = PageLayout()
    parts: list[str] = []
    for b in _reading_order(blocks, page.rect.width):
        lines: list[list[tuple[str, Box]]] = []
        size = 0.0
        for line in b["lines"]:
            chars = [(c["c"], tuple(c["bbox"])) for s in line["spans"] for c in s["chars"]]
            size = max([size] + [s["size"] for s in line["spans"]])
            while chars and chars[-1][0].isspace():
                chars.pop()
            while chars and chars[0][0].isspace():
                chars.pop(0)
            if chars:
                lines.append(chars)
        if not lines:
            continue
        if parts:
            parts.append(BLOCK_SEP)
            if boxes:
                out.char_boxes.extend([None] * len(BLOCK_SEP))
        start = sum(len(p) for p in parts)
        for i, chars in enumerate(lines):
            if i and _broken_word(lines[i - 1], chars):
                parts[-1] = parts[-1][:-1]  # "adip-" + "iscing" is "adipiscing"
                if boxes:
                    out.char_boxes.pop()
            elif i:
                parts.append(LINE_SEP)
                if boxes:
                    out.char_boxes.append(None)
            parts.append("".join(c for c, _ in chars))
            if boxes:
                out.char_boxes.extend(box for _, box in chars)
        end = sum(len(p) for p in parts)
        text = "".join(parts)[start:end]
        printed = ["".join(c for c, _ in chars) for chars in lines]
        out.blocks.append(Block(start, end, tuple(b["bbox"]), size, text, printed))
    out.text = "".join(parts)
    return out


def _needs_ocr(page: pymupdf.Page, layout: PageLayout, image_document: bool) -> bool:
    if len(layout.text.strip()) >= MIN_TEXT_CHARS:
        return False
    return image_document or bool(page.get_images(full=False))


# A page is rendered for OCR at 300 dpi, but never larger than this: a 10,000-pixel scan
# is read at a size Tesseract handles in seconds and a few hundred MB, not minutes and GB.
MAX_OCR_SIDE = 6000
MAX_OCR_PIXELS = 30_000_000


def ocr_zoom(width_pt: float, height_pt: float) -> float:
    zoom = OCR_DPI / 72
    side = max(width_pt, height_pt, 1.0) * zoom
    area = max(width_pt * height_pt, 1.0) * zoom * zoom
    return zoom * min(1.0, MAX_OCR_SIDE / side, (MAX_OCR_PIXELS / area) ** 0.5)


def _ocr_page(page: pymupdf.Page, language: str, timeout: float | None):
    from PIL import Image

    zoom = ocr_zoom(page.rect.width, page.rect.height)
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csGRAY)
    img = Image.frombytes("L", (pix.width, pix.height), pix.samples)
    return ocr_image(img, 1 / zoom, language=language, timeout=timeout)


def _norm_key(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


_PAGE_NUMBER = re.compile(r"(?:page\s+)?(?:\d{1,5}|[ivxlcdm]{1,8})(?:\s*(?:/|of)\s*\d{1,5})?", re.I)
# A contents or index entry: a title, a run of dot leaders, a page number ("Lists . . . 26").
_LEADER = re.compile(r"(?:\.\s{0,3}){4,}\s*(?:\d{1,5}|[ivxlcdm]{1,8})\b", re.I)
_EDGE_NUMBER = re.compile(r"^(\d{1,5})\b|\b(\d{1,5})$")
RUNNING_MIN_PAGES = 3  # a chapter's running head repeats on a few pages, not on most
MARGIN = 0.09  # of the page height: where running heads, feet and page numbers stand


def _margin_blocks(layouts: list[tuple[PageLayout, float]]) -> list[dict[int, str]]:
    """Per page, what each block in the top or bottom margin is, when it is not text: a page
    number, or a running head or foot (the same words, numbers aside, on several pages)."""
    per_page: list[list[tuple[int, str]]] = []
    counts: Counter[str] = Counter()
    for layout, height in layouts:
        cands = []
        last = len(layout.blocks) - 1
        for i, b in enumerate(layout.blocks):
            # Inside the top or bottom margin, among the first or last two blocks, short.
            near_edge = b.bbox[3] <= height * MARGIN or b.bbox[1] >= height * (1 - MARGIN)
            outer = i <= 1 or i >= last - 1
            if near_edge and outer and len(b.text) <= 120:
                cands.append((i, _norm_key(b.text)))
        per_page.append(cands)
        counts.update({k for _, k in cands})
    need = RUNNING_MIN_PAGES if len(layouts) >= RUNNING_MIN_PAGES else len(layouts) + 1
    # A head that carries the page number ("Chapter 13: Packages 84") is one even when its
    # words are on a single page: its number runs with the page's (printed = index + offset).
    offsets: Counter[int] = Counter()
    numbered: list[dict[int, int]] = []
    for pno, ((layout, _), cands) in enumerate(zip(layouts, per_page, strict=True)):
        nums = {}
        for i, _k in cands:
            m = _EDGE_NUMBER.search(layout.blocks[i].text)
            if m:
                nums[i] = int(m.group(1) or m.group(2)) - pno
        numbered.append(nums)
        offsets.update(set(nums.values()))
    page_offsets = {o for o, c in offsets.items() if c >= need}
    out: list[dict[int, str]] = []
    for layout, cands, nums in zip((lay for lay, _ in layouts), per_page, numbered, strict=True):
        kinds: dict[int, str] = {}
        for i, k in cands:
            if _PAGE_NUMBER.fullmatch(layout.blocks[i].text.strip()):
                kinds[i] = PAGE_NUMBER
            elif counts[k] >= need or nums.get(i) in page_offsets:
                kinds[i] = RUNNING_HEAD
        out.append(kinds)
    return out


_REF = re.compile(r"(\d{1,4})(?:[–-]\d{1,4})?(,?)")  # a page reference: "12", "45–47,"
_FILL = re.compile(r"[.·…_]+")  # leader dots standing as words of their own


def _entry(line: str, last_page: int) -> tuple[int, str] | None:
    """A contents or index line: words, then page references ("Ableitung 12, 45–47",
    "2.1 Grundlagen . . . 7"): (its last page, its first letter). A line with two bare
    numbers at its end is a table row ("Staff 45 48"), not an entry."""
    words = [w for w in line.split() if not _FILL.fullmatch(w)]
    refs = []
    while words and (m := _REF.fullmatch(words[-1].rstrip(".…·"))):
        if refs and not m.group(2):  # only a list of references is comma-separated
            return None
        refs.append(int(m.group(1)))
        words.pop()
    if not refs or refs[0] > last_page or not words:
        return None
    letters = [ch for ch in " ".join(words) if ch.isalpha()]
    return (refs[0], letters[0].casefold()) if letters else None


def _ordered(values: list) -> float:
    return sum(b >= a for a, b in zip(values, values[1:], strict=False)) / max(1, len(values) - 1)


def _contents_page(layout: PageLayout, margin: dict[int, str], last_page: int) -> bool:
    """A table of contents or an index page: most of its text is entries with dot leaders,
    or most of its lines are entries whose page numbers rise (contents) or whose words
    run in alphabetical order (an index), with or without leaders."""
    body = [b for i, b in enumerate(layout.blocks) if i not in margin]
    total = sum(len(b.text) for b in body)
    listed = sum(len(b.text) for b in body if _LEADER.search(b.text))
    if total > 0 and listed >= total * 0.5:
        return True
    lines = [line for b in body for line in b.lines if any(ch.isalpha() for ch in line)]
    entries = [e for e in (_entry(line, last_page) for line in lines) if e]
    if len(entries) < 6 or len(entries) < 0.5 * len(lines):
        return False
    return max(_ordered([p for p, _ in entries]), _ordered([a for _, a in entries])) >= 0.75


# A heading's block may open with its number or label: "5", "6.2", "Appendix A", "Chapter 3.".
_HEAD_PREFIX = (
    r"(?:(?:chapter|appendix|part|section|annex)\s+)?"
    r"(?:(?:\d{1,3}|[A-Z]|[ivxlc]{1,6})(?:\.\d{1,3})*\.?\s+)?"
)


def _find_title(text: str, title: str, start: int, end: int,
                blocks: list[tuple[int, int]]) -> tuple[int, int] | None:  # fmt: skip
    """The heading where it stands as a heading: a block of its own, holding the title and
    at most its number; never the same words inside a sentence or a running head. Compared
    folded ("Conﬁguring" is "Configuring"; "staﬀappears", whose ligature swallowed the
    space, is "staff appears")."""
    words = _quotes(fold(title)).split()
    if not words:
        return None
    pattern = re.compile(_HEAD_PREFIX + r"[.:]?\s*".join(re.escape(w) for w in words) + r"[.:]?",
                         re.I)  # fmt: skip
    i = bisect.bisect_left(blocks, (start, -1))
    while i < len(blocks) and blocks[i][0] < end:
        a, b = blocks[i][:2]
        if b - a <= 4 * len(title) + 40 and pattern.fullmatch(_quotes(fold(text[a:b]))):
            return a, b
        i += 1
    return None


# Outlines write quotes as TeX does (`gcc', ``Any''), pages print them curly (‘gcc’, “Any”).
_QUOTE_MARKS = str.maketrans({"`": "'", "‘": "'", "’": "'", "´": "'", '"': "''", "“": "''",
                              "”": "''"})  # fmt: skip


def _quotes(text: str) -> str:
    return text.translate(_QUOTE_MARKS)


def _toc_headings(doc: pymupdf.Document, text: str, pages: list[Page],
                  blocks: list[tuple[int, int, float]]) -> list[Heading]:  # fmt: skip
    """The outline's entries where they stand. A title printed as a heading is found;
    one the page does not print (an outline worded otherwise) starts where the entry
    points on its page, the first block below its destination: not at the page's top,
    where it took the end of the section before."""
    heads = []
    for level, title, pno, dest in doc.get_toc(simple=False):
        if not (1 <= pno <= len(pages)) or not title.strip():
            continue
        p = pages[pno - 1]
        # The outline's page can be one early or late (a heading at a page's foot).
        lo = pages[max(0, pno - 2)].char_from
        span = _find_title(text, title, p.char_from, p.char_to, blocks) or _find_title(
            text, title, lo, pages[min(len(pages), pno + 1) - 1].char_to, blocks)
        if span is None:
            at = _below(_point_from_top(doc, pno - 1, dest), p, blocks)
            span = (at, at)
        heads.append(Heading(*span, level, title.strip()))
    heads.sort(key=lambda h: (h.at, h.level))
    return heads


def _point_from_top(doc: pymupdf.Document, pno: int, dest: dict) -> float | None:
    """How far below the page's top an outline entry's destination shows, or None when it
    names only the page. PyMuPDF turns a direct destination's point to the page's top-down
    coordinates but gives a named one (what LaTeX and Texinfo write) as the PDF has it,
    from the page's foot."""
    to = dest.get("to") if isinstance(dest, dict) else None
    if to is None or to.y <= 0:
        return None
    if dest.get("kind") == pymupdf.LINK_NAMED:
        return doc[pno].rect.height - to.y
    return to.y


def _below(y: float | None, page: Page, blocks: list[tuple[int, int, float]]) -> int:
    """Where an outline entry's destination falls in the page's text: the first block
    that reaches below the point the entry shows at the window's top; the page's start
    when the entry names only the page."""
    if y is None:
        return page.char_from
    i = bisect.bisect_left(blocks, (page.char_from, -1))
    while i < len(blocks) and blocks[i][0] < page.char_to:
        a, _, bottom = blocks[i]
        if bottom > y + 1:
            return a
        i += 1
    return page.char_to


def _font_headings(blocks: list[tuple[int, Block]]) -> list[Heading]:
    """Headings from font size when the document has no outline."""
    sizes: Counter[float] = Counter()
    for _, b in blocks:
        sizes[round(b.size, 1)] += len(b.text)
    if not sizes:
        return []
    body = sizes.most_common(1)[0][0]
    cands = [
        (off, b)
        for off, b in blocks
        if b.size >= body * 1.2 and 2 <= len(b.text) <= 150 and not b.text.strip().isdigit()
    ]
    levels = sorted({round(b.size, 1) for _, b in cands}, reverse=True)[:3]
    return [
        Heading(off + b.start, off + b.end, levels.index(round(b.size, 1)) + 1, b.text.strip())
        for off, b in cands
        if round(b.size, 1) in levels
    ]


def open_document(path: Path) -> pymupdf.Document:
    try:
        doc = pymupdf.open(path)
    except Exception as exc:  # noqa: BLE001 - MuPDF raises several types for one meaning
        what = path.suffix.lstrip(".").upper() or "document"
        detail = " ".join(str(exc).replace(str(path), path.name).split())[:160]
        raise ExtractionError(
            f"the file is damaged or is not a {what} (MuPDF says: {detail})"
        ) from exc
    if doc.needs_pass and not doc.authenticate(""):
        doc.close()
        raise ExtractionError("the document is encrypted and needs a password")
    return doc


PageFn = Callable[[int, int], None]


def extract_paged(
    path: Path,
    kind: str,
    ocr_language: str = "eng",
    ocr_timeout: float | None = None,
    time_limit: float | None = None,
    on_page: PageFn | None = None,
) -> Extracted:
    """`on_page(done, total)` after every page, so a big document shows its progress."""
    pymupdf.TOOLS.mupdf_warnings(reset=True)
    started = time.monotonic()
    warnings: list[str] = []
    ocr_failed: dict[int, OcrFailed] = {}
    with open_document(path) as doc:
        if doc.page_count == 0:
            what = "image" if kind == "image" else "document"
            raise ExtractionError(f"the {what} is damaged or empty: MuPDF found no pages in it")
        layouts: list[tuple[PageLayout, float]] = []
        ocr_results: dict[int, object] = {}
        needs_ocr: set[int] = set()
        ocr_missing = False
        for pno in range(doc.page_count):
            if time_limit and time.monotonic() - started > time_limit:
                raise over_time_limit(time_limit, f" (at page {pno + 1} of {doc.page_count})")
            try:
                page = doc[pno]
                layout = layout_page(page, boxes=False)
                height = page.rect.height
            except Exception as exc:  # noqa: BLE001 - one bad page must not sink the rest
                warnings.append(f"page {pno + 1} could not be read ({exc}); it is left out")
                layouts.append((PageLayout(), 1.0))
                continue
            if _needs_ocr(page, layout, kind in ("image", "cbz")):
                if ocr_missing:
                    needs_ocr.add(pno)
                else:
                    try:
                        ocr_results[pno] = _ocr_page(page, ocr_language, ocr_timeout)
                    except OcrUnavailable:
                        ocr_missing = True
                        needs_ocr.add(pno)
                    except OcrFailed as exc:
                        ocr_failed[pno] = exc
                    except pymupdf.mupdf.FzErrorBase as exc:
                        ocr_failed[pno] = OcrFailed(f"the page image cannot be rendered ({exc})",
                                                    transient=False)  # fmt: skip
            layouts.append((layout, height))
            if on_page is not None:
                on_page(pno + 1, doc.page_count)
        if needs_ocr:
            warnings.append(
                f"{len(needs_ocr)} scanned page(s) need OCR, but Tesseract is not installed"
            )
        retry = False
        if ocr_failed:
            tried = len(ocr_failed) + len(ocr_results)
            first = next(iter(ocr_failed.values()))
            retry = any(e.transient for e in ocr_failed.values())
            pages_list = ", ".join(str(p + 1) for p in sorted(ocr_failed)[:10])
            note = (f"OCR failed on {len(ocr_failed)} of {tried} page(s) ({pages_list}): {first}"
                    + ("; will retry" if retry else ""))  # fmt: skip
            if not ocr_results and not any(layout.text.strip() for layout, _ in layouts):
                raise ExtractionError(note, retry=retry)
            warnings.append(note)
        meta_title = (doc.metadata or {}).get("title") or ""
        margins = _margin_blocks(layouts)

        parts: list[str] = []
        size = 0
        pages: list[Page] = []
        skip: list[tuple[int, int, str]] = []
        all_blocks: list[tuple[int, Block]] = []
        block_spans: list[tuple[int, int, float]] = []
        for pno, (layout, _) in enumerate(layouts):
            if pno:
                parts.append(BLOCK_SEP)
                size += len(BLOCK_SEP)
            start = size
            ocr = ocr_results.get(pno)
            if ocr is not None:
                text = ocr.text
                boxes = [(a + start, b + start, *rest) for a, b, *rest in ocr.boxes]
                pages.append(
                    Page(pno + 1, start, start + len(text), True, ocr.confidence, False, boxes)
                )
            else:
                text = layout.text
                margin = margins[pno]
                contents = _contents_page(layout, margin, doc.page_count + 50)
                for i, b in enumerate(layout.blocks):
                    if i in margin:
                        skip.append((start + b.start, start + b.end, margin[i]))
                        continue
                    block_spans.append((start + b.start, start + b.end, b.bbox[3]))
                    if contents:
                        skip.append((start + b.start, start + b.end, CONTENTS))
                    else:
                        all_blocks.append((start, b))
                pages.append(Page(pno + 1, start, start + len(text), needs_ocr=pno in needs_ocr))
            parts.append(text)
            size += len(text)
        text = "".join(parts)
        headings = _toc_headings(doc, text, pages, block_spans) or _font_headings(all_blocks)

    for w in pymupdf.TOOLS.mupdf_warnings(reset=True).splitlines():
        if "repair" in w.lower() or "broken" in w.lower():
            warnings.append("the file is damaged; MuPDF repaired what it could")
            break
    if not text.strip() and not needs_ocr:
        raise ExtractionError("no text found: the pages are empty or OCR found no words")
    if retry:
        warnings.append("pages whose OCR failed will be read again on the next run")
    first_head = next((h.title for h in headings if h.level == 1), "")
    title = meta_title.strip() or first_head or title_from_name(path)
    return Extracted(
        text=text, title=title, kind=kind, pages=pages, headings=headings, skip=skip,
        warnings=warnings, retry=retry,
    )  # fmt: skip
