"""Extract: any supported file -> one canonical text with pages, headings and skips."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from ..errors import ExtractionError, UnsupportedFormat
from .base import Extracted, Heading, Page
from .code import LANGUAGES, extract_code
from .html import extract_html
from .pdf import PageFn, extract_paged
from .text import extract_text

# Bump when a change alters the canonical text or structure of any document: every
# document indexed under another version becomes stale and is extracted again.
EXTRACTOR_VERSION = "8"  # 8: PDF table rows read with their headers; 7: a compound broken at its own hyphen keeps it (PDF)

MARKDOWN = {".md", ".markdown", ".mdown", ".mkd"}
PLAIN = {
    ".txt", ".text", ".rst", ".org", ".tex", ".log", ".adoc", ".asciidoc",
    ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg",
}  # fmt: skip
# The library that reads each: python-docx, python-pptx, openpyxl, odfpy, striprtf, the
# xlrd (Excel 97-2003), the standard library's csv / email / mailbox, extract-msg, tree-sitter grammars.
OFFICE = {
    ".docx": "docx", ".docm": "docx", ".dotx": "docx", ".dotm": "docx", ".pptx": "pptx",
    ".pptm": "pptx", ".xlsx": "xlsx", ".xlsm": "xlsx", ".xls": "xls", ".odt": "odt", ".ods": "ods", ".odp": "odp", ".rtf": "rtf",
    ".csv": "csv", ".tsv": "csv", ".eml": "eml", ".msg": "msg", ".mbox": "mbox",
    ".doc": "doc", ".dot": "doc", ".ppt": "ppt", ".pps": "ppt", ".pot": "ppt",
}  # fmt: skip
HTML = {".html", ".htm", ".xhtml"}
PAGED = {".pdf": "pdf", ".epub": "epub", ".xps": "xps", ".oxps": "xps", ".fb2": "fb2",
         ".cbz": "cbz", ".mobi": "mobi"}  # fmt: skip
IMAGES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif", ".webp", ".jp2"}
SUPPORTED = MARKDOWN | PLAIN | HTML | set(PAGED) | IMAGES | set(OFFICE) | set(LANGUAGES)
TEXTLIKE = {"markdown", "text", "html", "code", "csv", "rtf"}  # size-limited as text

__all__ = [
    "EXTRACTOR_VERSION", "SUPPORTED", "Extracted", "Heading", "Page", "extract", "is_supported",
    "kind_of", "unsupported_reason",
]  # fmt: skip


def kind_of(path: Path) -> str | None:
    ext = path.suffix.lower()
    if ext in MARKDOWN:
        return "markdown"
    if ext in PLAIN:
        return "text"
    if ext in HTML:
        return "html"
    if ext in PAGED:
        return PAGED[ext]
    if ext in OFFICE:
        return OFFICE[ext]
    if ext in LANGUAGES:
        return "code"
    if ext in IMAGES:
        return "image"
    return None


def is_supported(path: Path) -> bool:
    return kind_of(path) is not None


def unsupported_reason(path: Path) -> str:
    """Why kbapp does not read this file, and what the person can do about it."""
    ext = path.suffix.lower()
    return f"kbapp cannot read {ext or 'extension-less'} files"


def _reader(kind: str):
    """The extractor of an Office, OpenDocument, mail or spreadsheet kind (imported on use:
    each library costs start-up time only when such a file is read)."""
    if kind in ("docx", "pptx", "rtf"):
        from . import office

        return {"docx": office.extract_docx, "pptx": office.extract_pptx,
                "rtf": office.extract_rtf}[kind]  # fmt: skip
    if kind in ("doc", "ppt"):
        from . import legacy

        return {"doc": legacy.extract_doc, "ppt": legacy.extract_ppt}[kind]
    if kind in ("xlsx", "xls", "csv"):
        from . import sheet

        return {"xlsx": sheet.extract_xlsx, "xls": sheet.extract_xls, "csv": sheet.extract_csv}[kind]
    if kind in ("odt", "ods", "odp"):
        from . import odf

        return getattr(odf, f"extract_{kind}")
    from . import mail

    return {"eml": mail.extract_eml, "msg": mail.extract_msg_file, "mbox": mail.extract_mbox}[kind]


# A text document this large (a log dump, a data export) would take hours to embed and
# is almost never what a person meant to add; it fails with a reason that says so.
MAX_TEXT_BYTES = 50 * 2**20


MAX_IMAGE_PIXELS = 100_000_000


def _check_image(path: Path) -> None:
    """An image is what it says and small enough to read before MuPDF decodes it."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            w, h = img.size
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise ExtractionError(
            f"not a valid image: its contents are not a {path.suffix.lstrip('.').upper()} "
            "picture kbapp can read (damaged, or another kind of file)"
        ) from exc
    except Image.DecompressionBombError as exc:
        raise ExtractionError(f"the image is too large to read: {exc}") from exc
    if w * h > MAX_IMAGE_PIXELS:
        raise ExtractionError(
            f"the image is too large to OCR: {w} x {h} pixels ({w * h / 1e6:.0f} MP; "
            f"the limit is {MAX_IMAGE_PIXELS / 1e6:.0f} MP): scan it at a lower resolution"
        )


def extract(
    path: Path, ocr_language: str = "eng", ocr_timeout: float | None = None,
    time_limit: float | None = 600.0, max_text_bytes: int = MAX_TEXT_BYTES,
    on_page: PageFn | None = None, _depth: int = 0,
) -> Extracted:  # fmt: skip
    """Raises UnsupportedFormat or ExtractionError with a reason a person can act on."""
    kind = kind_of(path)
    if kind is None:
        raise UnsupportedFormat(unsupported_reason(path))
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ExtractionError(f"cannot read the file: {exc.strerror or exc}") from exc
    if size == 0:
        raise ExtractionError("the file is empty (0 bytes)")
    if kind in TEXTLIKE and size > max_text_bytes:
        raise ExtractionError(
            f"the file is too large to index: {size / 2**20:.0f} MB of text; the limit is "
            f"{max_text_bytes / 2**20:.0f} MB (set KBAPP_MAX_TEXT_MB to raise it)"
        )
    try:
        if kind in ("markdown", "text"):
            return extract_text(path, markdown=kind == "markdown")
        if kind == "html":
            return extract_html(path)
        if kind == "code":
            return extract_code(path)
        if kind in ("eml", "msg", "mbox"):
            return _reader(kind)(path, depth=_depth)
        if kind in OFFICE.values():
            return _reader(kind)(path)
        if kind == "image":
            _check_image(path)
        return extract_paged(path, kind, ocr_language, ocr_timeout, time_limit, on_page)
    except (ExtractionError, UnsupportedFormat):
        raise
    except pymupdf.mupdf.FzErrorBase as exc:
        raise ExtractionError(f"MuPDF could not read it: {exc}") from exc
    except OSError as exc:
        raise ExtractionError(f"cannot read the file: {exc.strerror or exc}") from exc
    except MemoryError as exc:
        raise ExtractionError("the file is too large to extract in memory") from exc
    except RecursionError as exc:
        raise ExtractionError("the file is nested too deeply to read") from exc
    except Exception as exc:
        if kind not in OFFICE.values() and kind != "code":
            raise
        # The format libraries raise anything (KeyError, lxml and zip errors) on a damaged
        # file: it is that file's failure, said in words, never a crash of the run.
        detail = str(exc) or type(exc).__name__
        raise ExtractionError(f"not a valid {kind.upper()} file: {detail}") from exc
