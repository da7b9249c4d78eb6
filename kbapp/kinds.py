"""What each kind of document calls its parts, in one place (no heavy imports).

A citation names the part a reader knows: a PDF's page, a presentation's slide, a
mailbox's message; sheets and code carry their own locator (an A1 range, a line range)
on each chunk. Only the kinds MuPDF renders are shown as page images in the viewer.
"""

from __future__ import annotations

from urllib.parse import unquote

RENDERED = frozenset({"pdf", "epub", "xps", "fb2", "cbz", "mobi", "image"})
UNITS = {**{k: "page" for k in RENDERED}, "pptx": "slide", "odp": "slide", "ppt": "slide", "mbox": "message"}
SHEETS = frozenset({"xlsx", "xls", "ods", "csv"})
CODE = frozenset({"code"})


def unit_of(kind: str | None) -> str | None:
    """"page", "slide" or "message" for a kind whose parts are numbered, else None."""
    return UNITS.get(kind or "")


def is_rendered(kind: str | None) -> bool:
    return (kind or "") in RENDERED


def category_of(kind: str | None) -> str:
    if kind in CODE:
        return "code"
    if kind in SHEETS:
        return "table"
    if kind in ("eml", "msg", "mbox"):
        return "email"
    return "text"


def where_of(hit) -> str:
    """Where the fragment is, as a reader says it."""
    if hit.line_from is not None:
        lf, lt = hit.line_from, hit.line_to or hit.line_from
        return f"line {lf}" if lf == lt else f"lines {lf}–{lt}"
    if hit.locator and hit.locator.startswith("sheet="):
        frag = dict(part.split("=", 1) for part in hit.locator.split("&"))
        return f"{unquote(frag['sheet'])}!{frag.get('range', '')}"
    unit = unit_of(hit.kind)
    if unit and hit.page_from is not None:
        if hit.page_to is not None and hit.page_to != hit.page_from:
            return f"{unit}s {hit.page_from}–{hit.page_to}"
        return f"{unit} {hit.page_from}"
    return f"characters {hit.char_from}–{hit.char_to}"


# The kinds a search may be narrowed to, by the names people use (`--kind pdf,sheet`).
KIND_NAMES: dict[str, frozenset[str]] = {
    "pdf": frozenset({"pdf"}),
    "word": frozenset({"docx", "odt", "rtf", "doc"}),
    "sheet": frozenset(SHEETS),
    "slides": frozenset({"pptx", "odp", "ppt"}),
    "mail": frozenset({"eml", "msg", "mbox"}),
    "code": frozenset(CODE),
    "text": frozenset({"markdown", "text", "html"}),
    "ebook": frozenset({"epub", "fb2", "mobi", "xps", "cbz"}),
    "image": frozenset({"image"}),
}


def kinds_named(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The stored kinds behind the names a user gave; an unknown name is refused with
    the names there are."""
    out: set[str] = set()
    for name in names:
        key = name.strip().lower()
        if key not in KIND_NAMES:
            from .errors import SearchError

            raise SearchError(
                f"unknown kind {name!r}; choose among {', '.join(KIND_NAMES)}"
            )
        out |= KIND_NAMES[key]
    return tuple(sorted(out))
