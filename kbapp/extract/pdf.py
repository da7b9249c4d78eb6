"""PDF (and the other paged formats MuPDF reads: EPUB, XPS, FB2, CBZ, images).

Page by page; the page -> character-range map is kept. Pages without a usable text layer
are rendered and OCR'd. Two-column pages are read column by column. Running headers and
footers are found across pages and excluded from chunking (they stay in the canonical
text, so no offset moves).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import pymupdf

from ..errors import ExtractionError
from .base import CONTENTS, Extracted, Page, over_time_limit
from .ocr import OCR_DPI, OcrFailed, OcrUnavailable, ocr_image
from .pdf_headings import font_headings, toc_headings
from .pdf_layout import BLOCK_SEP, MIN_TEXT_CHARS, Block, PageLayout, layout_page
from .pdf_margins import contents_page, margin_blocks
from .text import title_from_name

log = logging.getLogger(__name__)


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


def page_shape(path: Path) -> tuple[int, int] | None:
    """(pages, of those the scanned ones) of a PDF or an image file, from its page tree and
    the resources of at most three pages (first, middle, last): a page that uses no font
    and shows an image is one OCR will read. A few milliseconds a file, no page is drawn;
    None where the file cannot be opened. An estimate for planning: what the reading finds
    is what counts."""
    try:
        with pymupdf.open(path) as doc:
            if doc.needs_pass:
                return None
            pages = doc.page_count
            if not doc.is_pdf:  # an image (or a multi-page TIFF): every page is OCR'd
                return pages, pages
            looked = sorted({0, pages // 2, pages - 1}) if pages else []
            scans = sum(1 for i in looked if not doc.get_page_fonts(i) and doc.get_page_images(i))
            return pages, round(pages * scans / len(looked)) if looked else 0
    except Exception:  # noqa: BLE001 - a damaged file is measured by its bytes instead
        return None


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
        margins = margin_blocks(layouts)

        parts: list[str] = []
        size = 0
        pages: list[Page] = []
        skip: list[tuple[int, int, str]] = []
        readings: list[tuple[int, int, str]] = []
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
                contents = contents_page(layout, margin, doc.page_count + 50)
                for i, b in enumerate(layout.blocks):
                    if i in margin:
                        skip.append((start + b.start, start + b.end, margin[i]))
                        continue
                    block_spans.append((start + b.start, start + b.end, b.bbox[3]))
                    if contents:
                        skip.append((start + b.start, start + b.end, CONTENTS))
                    else:
                        all_blocks.append((start, b))
                readings.extend((start + a, start + b, r) for a, b, r in layout.readings)
                pages.append(Page(pno + 1, start, start + len(text), needs_ocr=pno in needs_ocr))
            parts.append(text)
            size += len(text)
        text = "".join(parts)
        headings = toc_headings(doc, text, pages, block_spans) or font_headings(all_blocks)

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
        warnings=warnings, retry=retry, readings=readings,
    )  # fmt: skip
