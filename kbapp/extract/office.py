"""Word (DOCX), PowerPoint (PPTX) and RTF, read with python-docx, python-pptx and striprtf.

DOCX: body paragraphs and tables in reading order, headings from paragraph styles (Heading
1..n, Title, or an outline level), table rows as "cell | cell"; headers and footers,
footnotes, endnotes, comments and text boxes are kept once, each in its own section at the
end, never repeated into every chunk. PPTX: one numbered part per slide (its title as the
section), shapes, tables and speaker notes. The canonical text is the rendered text.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from ..errors import ExtractionError
from .base import Builder, Extracted
from .package import check_package
from .sheet import cell_text, table_lines
from .text import decode, title_from_name

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_NAME = re.compile(r"(?:heading|otsikko|başlık|titre|überschrift|título)\s*(\d)", re.I)

def _xml_texts(blob: bytes, item: str) -> list[str]:
    """The text of each <w:item> element of a Word XML part (footnotes, comments)."""
    from lxml import etree

    root = etree.fromstring(blob, etree.XMLParser(resolve_entities=False, huge_tree=False))
    out = []
    for el in root.iter(f"{W}{item}"):
        if el.get(f"{W}type") in ("separator", "continuationSeparator", "continuationNotice"):
            continue
        paras = ["".join(t.text or "" for t in p.iter(f"{W}t")) for p in el.iter(f"{W}p")]
        text = "\n".join(p for p in paras if p.strip())
        if text.strip():
            out.append(text)
    return out


def _heading_level(paragraph) -> int:
    """1..9 for a heading paragraph (style name or outline level), 0 for body text."""
    ppr = paragraph._p.pPr
    lvl = ppr.find(f"{W}outlineLvl") if ppr is not None else None
    style = paragraph.style
    while lvl is None and style is not None:
        sppr = style.element.pPr
        lvl = sppr.find(f"{W}outlineLvl") if sppr is not None else None
        if lvl is None:
            name = f"{style.name or ''} {style.style_id or ''}"
            if re.search(r"\btitle\b", name, re.I):
                return 1
            m = _HEADING_NAME.search(name)
            if m:
                return max(1, int(m.group(1)))
            style = style.base_style
    if lvl is not None:
        val = int(lvl.get(f"{W}val", "9"))
        return val + 1 if val < 9 else 0
    return 0


def _table_rows(table) -> list[str]:
    rows = []
    for row in table.rows:
        cells, seen = [], set()
        for cell in row.cells:
            if id(cell._tc) in seen:  # a merged cell is returned once per grid column
                cells.append("")
                continue
            seen.add(id(cell._tc))
            cells.append(cell.text)
        rows.append(cells)
    return table_lines(rows)


def _body_items(body, parent):
    """The body's paragraphs and tables in reading order, those inside content controls
    (w:sdt: a form's fields, a cover page, a table of contents) included."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    for el in body:
        if el.tag == f"{W}p":
            yield Paragraph(el, parent)
        elif el.tag == f"{W}tbl":
            yield Table(el, parent)
        elif el.tag == f"{W}sdt":
            content = el.find(f"{W}sdtContent")
            if content is not None:
                yield from _body_items(content, parent)


def _paragraph_text(p) -> str:
    """A paragraph's words as shown: runs, hyperlinks, field results, inline content
    controls, smart tags; not deleted text, field instructions or text boxes (those are
    read once, in their own section)."""
    out: list[str] = []

    def walk(el) -> None:
        for child in el:
            tag = child.tag
            if tag == f"{W}t":
                out.append(child.text or "")
            elif tag == f"{W}tab":
                out.append("\t")
            elif tag in (f"{W}br", f"{W}cr"):
                out.append("\n")
            elif tag not in _NOT_SHOWN:
                walk(child)

    walk(p)
    return "".join(out)


_NOT_SHOWN = {f"{W}txbxContent", f"{W}del", f"{W}pPr", f"{W}rPr", f"{W}instrText",
              f"{W}delText", "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"}  # fmt: skip


_WORD_MAIN = b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
# Macro-enabled documents (DOCM) and templates (DOTX, DOTM) hold the same document part
# under another content type, which python-docx refuses.
_WORD_OTHER_MAINS = (b"application/vnd.ms-word.document.macroEnabled.main+xml",
                     b"application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
                     b"application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml")  # fmt: skip
MAX_REWRITE = 200 * 2**20


def _as_document(path: Path):
    """The path, or an in-memory copy whose main part is declared a plain document's."""
    import io
    import zipfile

    with zipfile.ZipFile(path) as z:
        try:
            types = z.read("[Content_Types].xml")
        except KeyError:
            return str(path)
        if not any(t in types for t in _WORD_OTHER_MAINS):
            return str(path)
        if sum(i.file_size for i in z.infolist()) > MAX_REWRITE:
            raise ExtractionError("the macro-enabled document is too large to read")
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as w:
            for info in z.infolist():
                data = z.read(info)
                if info.filename == "[Content_Types].xml":
                    for t in _WORD_OTHER_MAINS:
                        data = data.replace(t, _WORD_MAIN)
                w.writestr(info, data)
    out.seek(0)
    return out


def extract_docx(path: Path) -> Extracted:
    import docx
    from docx.table import Table

    check_package(path, "DOCX")
    try:
        d = docx.Document(_as_document(path))
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors...
        raise ExtractionError(f"not a valid DOCX: {exc}") from exc
    b = Builder()
    title = (d.core_properties.title or "").strip()
    for item in _body_items(d.element.body, d._body):
        if isinstance(item, Table):
            for line in _table_rows(item):
                b.block(line)
            continue
        text = _paragraph_text(item._p)
        level = _heading_level(item) if text.strip() else 0
        b.block(text, level=level)
        if level == 1 and not title:
            title = " ".join(text.split())
    extras: list[tuple[str, list[str]]] = []
    seen: set[str] = set()
    margins = []
    for sec in d.sections:
        for part in (sec.header, sec.first_page_header, sec.even_page_header,
                     sec.footer, sec.first_page_footer, sec.even_page_footer):  # fmt: skip
            if part.is_linked_to_previous:
                continue
            text = "\n".join(p.text for p in part.paragraphs if p.text.strip())
            if text and text not in seen:
                seen.add(text)
                margins.append(text)
    extras.append(("Headers and footers", margins))
    parts = {str(p.partname): p for p in d.part.package.iter_parts()}
    for name, partname, item in (
        ("Footnotes", "/word/footnotes.xml", "footnote"),
        ("Endnotes", "/word/endnotes.xml", "endnote"),
        ("Comments", "/word/comments.xml", "comment"),
    ):
        if partname in parts:
            extras.append((name, _xml_texts(parts[partname].blob, item)))
    boxes: list[str] = []
    for tb in d.element.body.iter(f"{W}txbxContent"):
        text = "\n".join(
            "".join(t.text or "" for t in p.iter(f"{W}t")) for p in tb.iter(f"{W}p")
        ).strip()
        if text and text not in boxes:  # Word stores a text box twice (drawing + fallback)
            boxes.append(text)
    extras.append(("Text boxes", boxes))
    for name, texts in extras:
        if texts:
            b.block(name, level=1)
            for t in texts:
                b.block(t)
    return b.extracted(title or title_from_name(path), "docx")


def _shape_texts(shapes) -> list[str]:
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    out = []
    for sh in shapes:
        if sh.shape_type == MSO_SHAPE_TYPE.GROUP:
            out.extend(_shape_texts(sh.shapes))
        elif getattr(sh, "has_table", False) and sh.has_table:
            out.extend(table_lines([[c.text for c in r.cells] for r in sh.table.rows]))
        elif getattr(sh, "has_chart", False) and sh.has_chart:
            out.extend(_chart_lines(sh.chart))
        elif getattr(sh, "has_text_frame", False) and sh.has_text_frame:
            out.append(sh.text_frame.text)
    return out


def _chart_lines(chart) -> list[str]:
    """A chart's words: its title, then each series with its categories and values, so
    "Q3 sales" finds the slide whose chart shows them."""
    out = []
    with contextlib.suppress(Exception):  # a chart part python-pptx cannot read: no words
        if chart.has_title and chart.chart_title.has_text_frame:
            out.append("Chart: " + chart.chart_title.text_frame.text)
        plot = chart.plots[0] if len(chart.plots) else None
        categories = [str(c) for c in plot.categories] if plot is not None else []
        for series in chart.series:
            values = list(series.values)
            pairs = [f"{c} {cell_text(v)}"
                     for c, v in zip(categories, values, strict=False) if v is not None]  # fmt: skip
            out.append(f"{series.name}: " + ", ".join(pairs) if pairs else str(series.name))
    return [line for line in out if line.strip()]


def extract_pptx(path: Path) -> Extracted:
    import pptx

    check_package(path, "PPTX")
    try:
        prs = pptx.Presentation(str(path))
    except Exception as exc:
        raise ExtractionError(f"not a valid PPTX: {exc}") from exc
    b = Builder()
    for number, slide in enumerate(prs.slides, start=1):
        b.start_unit(number)
        title_shape = slide.shapes.title
        heading = " ".join(title_shape.text.split()) if title_shape is not None else ""
        b.block(heading or f"Slide {number}", level=1)
        others = [sh for sh in slide.shapes if title_shape is None or sh.shape_id != title_shape.shape_id]
        for text in _shape_texts(others):
            b.block(text)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text
            if notes.strip():
                b.block("Notes: " + notes)
    title = (prs.core_properties.title or "").strip() or title_from_name(path)
    return b.extracted(title, "pptx")


_BIN = re.compile(rb"\\bin(\d{1,10}) ?")


def _without_binary(data: bytes) -> bytes:
    """RTF's \\binN is followed by N raw bytes (a picture, an OLE object): not text, and
    no encoding decodes them. They are cut before the text is decoded."""
    out, pos = [], 0
    for m in _BIN.finditer(data):
        if m.start() < pos:
            continue  # inside an earlier payload
        out.append(data[pos : m.start()])
        pos = min(len(data), m.end() + int(m.group(1)))
    out.append(data[pos:])
    return b"".join(out)


def extract_rtf(path: Path) -> Extracted:
    from striprtf.striprtf import rtf_to_text

    raw, warnings = decode(_without_binary(path.read_bytes()), path.name)
    if not raw.lstrip().startswith("{\\rtf"):
        raise ExtractionError("not a valid RTF: it does not start with {\\rtf")
    try:
        text = rtf_to_text(raw, errors="replace")
    except Exception as exc:
        raise ExtractionError(f"not a valid RTF: {exc}") from exc
    b = Builder()
    for line in text.splitlines():
        b.block(line)
    return b.extracted(title_from_name(path), "rtf", warnings)
