"""Shared by the development sets' make_pdfs.py: lay out an HTML body as a paginated A4
PDF with PyMuPDF's Story and give it a title, as a typeset PDF would have."""

from __future__ import annotations

from pathlib import Path

import pymupdf

CSS = "body {font-family: serif; font-size: 10pt;} pre {font-size: 8pt;} h1 {font-size: 16pt;}"


def write_pdf(body: str | list[str], target: Path, title: str, css: str = CSS) -> int:
    """Writes `body` (HTML; a list: each part from a new page) to `target` with `title` in
    its metadata; returns its page count."""
    box = pymupdf.paper_rect("a4")
    writer = pymupdf.DocumentWriter(str(target))
    for part in [body] if isinstance(body, str) else body:
        story = pymupdf.Story(html=part, user_css=css)
        more = True
        while more:
            device = writer.begin_page(box)
            more, _ = story.place(box + (54, 54, -54, -54))
            story.draw(device)
            writer.end_page()
    writer.close()
    with pymupdf.open(target) as doc:
        doc.set_metadata({"title": title})
        doc.saveIncr()
        return doc.page_count
