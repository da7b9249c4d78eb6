"""OpenDocument (ODT, ODS, ODP), read with odfpy.

ODT as paragraphs and tables in reading order with text:h outline levels as headings;
ODS through the same sheet rendering as XLSX (rows with their header, A1 ranges); ODP one
numbered part per slide with its title frame as the section and the speaker notes.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path

from ..errors import ExtractionError
from .base import Builder, Extracted
from .package import PASSWORD_PROTECTED, check_package
from .sheet import Row, add_sheet, cell_text, table_lines
from .text import title_from_name

TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
PRES = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
# A cell or row repeated this often is the empty rest of the sheet, not data.
MAX_REPEAT = 1000


# OpenOffice.org 1-2 and many LibreOffice-made files declare `<!DOCTYPE ... "Manifest.dtd">`.
# odfpy parses with defusedxml, which refuses any external reference, so each such file
# failed as "not valid". A DOCTYPE without an internal subset declares nothing a reader
# needs: it is dropped before parsing. One with an internal subset (entities) is still
# refused, as it should be.
_DOCTYPE = re.compile(rb"<!DOCTYPE[^\[>]*>")
# Their manifest also names the OpenOffice.org namespace, where odfpy finds no parts.
_OLD_MANIFEST = b"http://openoffice.org/2001/manifest"
_MANIFEST = b"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"
MAX_REWRITE = 200 * 2**20  # a package rewritten in memory without its DOCTYPEs


def _needs_rewrite(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> bool:
    """A DOCTYPE or the old manifest namespace stands in a part's first 4 KB (read only)."""
    with z.open(info) as fh:
        head = fh.read(4096)
    return bool(_DOCTYPE.search(head)) or _OLD_MANIFEST in head


_ENTRY = re.compile(rb'<manifest:file-entry\b[^>]*?manifest:full-path="([^"]*)"[^>]*?(?:/>|>.*?</manifest:file-entry>)',
                    re.S)  # fmt: skip


def _manifest(z: zipfile.ZipFile) -> bytes:
    try:
        return z.read("META-INF/manifest.xml")
    except KeyError:
        return b""


def _missing_parts(z: zipfile.ZipFile, manifest: bytes) -> set[bytes]:
    """Parts the manifest lists that the package does not hold (a thumbnail a tool left
    out): a reader that trusts the manifest stops at the first one."""
    names = {n.encode() for n in z.namelist()}
    return {p for p in _ENTRY_PATHS.findall(manifest)
            if p != b"/" and not p.endswith(b"/") and p not in names}  # fmt: skip


_ENTRY_PATHS = re.compile(rb'manifest:full-path="([^"]*)"')


def _package(path: Path):
    """The path itself, or an in-memory copy without external-DTD declarations and
    without manifest entries for parts the package does not hold."""
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
        manifest = _manifest(z)
        if b"manifest:encryption-data" in manifest:
            raise ExtractionError(PASSWORD_PROTECTED)
        missing = _missing_parts(z, manifest)
        xml = [i for i in infos if i.filename.endswith(".xml")]
        if not missing and not any(_needs_rewrite(z, i) for i in xml):
            return str(path)
        if sum(i.file_size for i in infos) > MAX_REWRITE:
            raise ExtractionError("the document declares an external DTD and is too large "
                                  "to read safely without it")  # fmt: skip
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as w:
            for i in infos:
                data = z.read(i)
                if i.filename.endswith(".xml"):
                    data = _DOCTYPE.sub(b"", data, count=1)
                if i.filename == "META-INF/manifest.xml":
                    data = data.replace(_OLD_MANIFEST, _MANIFEST)
                    data = _ENTRY.sub(lambda m: b"" if m.group(1) in missing else m.group(0),
                                      data)  # fmt: skip
                w.writestr(i.filename, data)
        out.seek(0)
        return out


def _load(path: Path, fmt: str):
    from odf.opendocument import load

    check_package(path, fmt)
    try:
        return load(_package(path))
    except ExtractionError:
        raise
    except Exception as exc:  # odfpy raises KeyError, xml errors... on a damaged package
        name = type(exc).__name__
        if name in ("EntitiesForbidden", "ExternalReferenceForbidden", "DTDForbidden"):
            raise ExtractionError(f"the {fmt} file declares XML entities or external "
                                  "references; refused for safety") from exc  # fmt: skip
        if isinstance(exc, ValueError):  # odfpy's own schema check of an attribute value
            raise _Invalid(f"not a valid {fmt}: {exc}") from exc
        raise ExtractionError(f"not a valid {fmt}: {exc}") from exc


class _Invalid(ExtractionError):
    """odfpy refused a value its schema does not allow (files other suites open fine)."""


def _lenient_units(path: Path) -> list[list[tuple[int, str]]]:
    """The text of content.xml read without odfpy's schema check, as units (slides, or one
    unit for a text document) of (heading level, text) blocks. No entity is resolved and
    nothing is fetched."""
    from lxml import etree

    with zipfile.ZipFile(_package(path)) as z:
        data = z.read("content.xml")
    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True,
                                                  huge_tree=False))  # fmt: skip
    pages = [p for p in root.iter(f"{{{DRAW}}}page")] or [root]
    units = []
    for page in pages:
        blocks = []
        for el in page.iter(f"{{{TEXT}}}h", f"{{{TEXT}}}p"):
            if el.getparent() is not None and el.getparent().tag in (f"{{{TEXT}}}p", f"{{{TEXT}}}h"):
                continue
            level = int(el.get(f"{{{TEXT}}}outline-level", "1")) if el.tag.endswith("}h") else 0
            blocks.append((level, "".join(el.itertext())))
        units.append(blocks)
    return units


def _read_leniently(path: Path, kind: str, exc: _Invalid) -> Extracted:
    b = Builder()
    for number, blocks in enumerate(_lenient_units(path), start=1):
        if kind == "odp":
            b.start_unit(number)
        for level, text in blocks:
            b.block(text, level=level)
    note = (f"the file breaks the OpenDocument rules ({exc}); its text was read without "
            "that check (its title may be missing)")  # fmt: skip
    return b.extracted(title_from_name(path), kind, [note])


def _body(doc, part: str):
    """office:body's text, spreadsheet or presentation element. Looked up by name: odfpy's
    own attribute can hold the whitespace node before it (KOffice files)."""
    for el in _elements(doc.body):
        if el.qname == (OFFICE, part):
            return el
    raise ExtractionError(f"the file has no {part} body (is it another kind of OpenDocument?)")


def _text(node) -> str:
    from odf import teletype

    return teletype.extractText(node)


def _elements(node) -> Iterable:
    return (c for c in node.childNodes if c.nodeType == c.ELEMENT_NODE)


def _attr(node, ns: str, name: str) -> str | None:
    return node.attributes.get((ns, name))


def _title(doc, path: Path, b: Builder | None = None) -> str:
    """The document's own title, else its first top-level heading, else its file name."""
    from odf import dc

    for t in doc.getElementsByType(dc.Title):
        s = " ".join(_text(t).split())
        if s:
            return s
    first = next((h.title for h in (b.headings if b else []) if h.level == 1), None)
    return first or title_from_name(path)


def _table_lines(table) -> list[str]:
    rows = []
    for _, cells in _rows(table):
        width = max((c for c, _ in cells), default=0)
        row = [""] * width
        for c, t in cells:
            row[c - 1] = t
        rows.append(row)
    return table_lines(rows)


def _rows(table) -> Iterable[Row]:
    number = 0
    for row in _elements(table):
        name = row.qname
        if name == (TABLE, "table-header-rows") or name == (TABLE, "table-rows"):
            yield from _rows(row)
            continue
        if name != (TABLE, "table-row"):
            continue
        repeat = int(_attr(row, TABLE, "number-rows-repeated") or 1)
        cells: list[tuple[int, str]] = []
        col = 0
        for cell in _elements(row):
            n = int(_attr(cell, TABLE, "number-columns-repeated") or 1)
            value = _attr(cell, OFFICE, "value")
            kind = _attr(cell, OFFICE, "value-type")
            text = " ".join(_text(cell).split())
            if not text and value is not None:
                text = cell_text(float(value)) if kind in ("float", "percentage") else value
            if text:
                for k in range(min(n, MAX_REPEAT)):
                    cells.append((col + k + 1, text))
            col += n
        for _ in range(min(repeat, MAX_REPEAT) if cells else 1):
            number += 1
            yield number, cells
        if not cells:
            number += repeat - 1


def _walk_text(b: Builder, node) -> None:
    for el in _elements(node):
        name = el.qname
        if name == (TEXT, "h"):
            level = int(_attr(el, TEXT, "outline-level") or 1)
            b.block(_text(el), level=max(1, level))
        elif name == (TEXT, "p"):
            b.block(_text(el))
        elif name == (TABLE, "table"):
            for line in _table_lines(el):
                b.block(line)
        elif name in ((TEXT, "list"), (TEXT, "list-item"), (TEXT, "section"),
                      (TEXT, "list-header"), (TEXT, "index-body")):  # fmt: skip
            _walk_text(b, el)


def extract_odt(path: Path) -> Extracted:
    try:
        doc = _load(path, "ODT")
    except _Invalid as exc:
        return _read_leniently(path, "odt", exc)
    b = Builder()
    _walk_text(b, _body(doc, "text"))
    return b.extracted(_title(doc, path, b), "odt")


def extract_ods(path: Path) -> Extracted:
    from odf.table import Table

    doc = _load(path, "ODS")
    b, warnings = Builder(), []
    for table in _body(doc, "spreadsheet").getElementsByType(Table):
        add_sheet(b, _attr(table, TABLE, "name") or "Sheet", _rows(table), warnings)
    return b.extracted(_title(doc, path), "ods", warnings)


def extract_odp(path: Path) -> Extracted:
    from odf.draw import Page

    try:
        doc = _load(path, "ODP")
    except _Invalid as exc:
        return _read_leniently(path, "odp", exc)
    b = Builder()
    for number, page in enumerate(_body(doc, "presentation").getElementsByType(Page), start=1):
        b.start_unit(number)
        title, body, notes = "", [], []
        for el in _elements(page):
            if el.qname == (PRES, "notes"):
                notes.append(_text(el))
            elif el.qname == (DRAW, "frame"):
                text = _text(el)
                if _attr(el, PRES, "class") == "title" and not title:
                    title = " ".join(text.split())
                else:
                    body.append(text)
        b.block(title or f"Slide {number}", level=1)
        for text in body:
            b.block(text)
        note = "\n".join(n for n in notes if n.strip())
        if note.strip():
            b.block("Notes: " + note)
    return b.extracted(_title(doc, path), "odp")


def sheet_rows(path: Path, name: str) -> Iterable[Row]:
    """One sheet's rows (for the viewer's table)."""
    from odf.table import Table

    doc = _load(path, "ODS")
    for table in _body(doc, "spreadsheet").getElementsByType(Table):
        if (_attr(table, TABLE, "name") or "Sheet") == name:
            yield from _rows(table)
            return
    raise ExtractionError(f"the spreadsheet has no sheet {name!r} any more")
