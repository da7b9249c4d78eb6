"""Reading a document back: the document at a path as the user gives it, its canonical
text, and the range a citation names (a page, slide or message, lines, sheet rows)."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote

from ..cite import a1_rows, parse_citation
from ..errors import KbError, LibraryError
from ..paths import display_path
from ..store import Backend as Store


def document_id(store: Store, path: str | os.PathLike[str]) -> int:
    """The link's own path for a symlinked file (that is what is stored), the resolved
    path otherwise."""
    given = Path(path).expanduser()
    plain = Path(os.path.abspath(given))
    for p in (plain, plain.parent.resolve() / plain.name, given.resolve()):
        doc_id = store.documents.id_of(str(p))
        if doc_id is not None:
            return doc_id
    raise LibraryError(f"{display_path(str(plain))} is not in this library")


def document_text(store: Store, doc_id: int) -> str:
    text = store.documents.text(doc_id)
    if text is None:
        raise LibraryError("that document has no indexed text (is it indexed?)")
    return text


def show(store: Store, citation: str) -> str:
    """The cited range of the canonical text (a page's, slide's or message's text for
    `#page=N` alone, the lines for `#line=a,b` alone)."""
    loc = parse_citation(citation)
    doc_id = document_id(store, loc.path)
    text = document_text(store, doc_id)
    if loc.sheet is not None and loc.char_from is None:
        return _sheet(store, doc_id, text, loc)
    if loc.char_from is not None:
        if loc.char_to > len(text):
            raise KbError(f"the range ends past the document's {len(text)} characters")
        return text[loc.char_from : loc.char_to]
    if loc.line_from is not None:
        lines = text.splitlines(keepends=True)
        if loc.line_to > len(lines):
            raise KbError(f"the range ends past the document's {len(lines)} lines")
        return "".join(lines[loc.line_from - 1 : loc.line_to])
    for number, a, b in store.documents.pages(doc_id):
        if number == loc.page:
            return text[a:b]
    raise KbError(f"the document has no {loc.unit} {loc.page}")


def _sheet(store: Store, doc_id: int, text: str, loc) -> str:
    """A sheet's passages that hold the cited rows (all of the sheet without a range)."""
    spans, sheets = [], []
    for locator, a, b in store.documents.located(doc_id):
        fields = dict(p.split("=", 1) for p in (locator or "").split("&") if "=" in p)
        if "sheet" not in fields:
            continue
        name = unquote(fields["sheet"])
        if name not in sheets:
            sheets.append(name)
        if name != loc.sheet:
            continue
        r1, r2 = a1_rows(fields.get("range", "A1"))
        if loc.row_from is None or (r1 <= loc.row_to and loc.row_from <= r2):
            spans.append((a, b))
    if not spans:
        if loc.sheet not in sheets:
            listed = ", ".join(repr(n) for n in sheets) or "none with text"
            raise KbError(f"the workbook has no sheet {loc.sheet!r}; its sheets: {listed}")
        raise KbError(f"sheet {loc.sheet!r} has no text in rows {loc.row_from}-{loc.row_to}")
    return text[min(a for a, _ in spans) : max(b for _, b in spans)]
