"""Citations: kbapp, not a model, attaches document, label and locator to each source.

Locators: `#page=N` (PDF Open Parameters, 1-based physical page) for paged sources,
`#slide=N` for presentations, `#message=N` for mailboxes, `#sheet=NAME&range=A1:F9` for
spreadsheets, `#line=a,b` (lines a to b, numbered from 1 as an editor and the result card
number them, so a user can type back what the card shows) for code, and
`#char=from,to` (RFC 5147 style, offsets in the canonical text) for all; the full
fragment carries the source's own locator and the character range. The model is asked to write [n] and never a link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from .errors import KbError
from .kinds import unit_of, where_of
from .search.result import Hit

_KEYS = {"page", "slide", "message", "char", "line", "sheet", "range"}


@dataclass(frozen=True)
class Citation:
    index: int
    document_id: int
    document_name: str
    path: str
    label: str
    locator: str  # the source's own address: "#page=N", "#slide=N", "#sheet=S&range=A1:C9"...
    page: int | None  # the numbered part (page, slide, message) the fragment starts on
    char_from: int
    char_to: int
    quote: str  # the chunk's own content, never the embedded text with its header
    cosine_distance: float | None
    weak_match: bool
    where: str = ""  # the locator in words: "page 3", "slide 7", "Budget!A12:F30", "lines 4–9"
    # a table's rows as read, with their headers (Hit.reading): what a prompt gives, since
    # "1983 23,773.5 10,340.5" alone does not say which figure is which
    reading: str | None = None

    @property
    def fragment(self) -> str:
        """The full address: the source's own locator and the character range."""
        char = f"char={self.char_from},{self.char_to}"
        return f"{self.locator}&{char}" if not self.locator.startswith("#char=") else f"#{char}"

    @property
    def uri(self) -> str:
        return f"{self.path}{self.fragment}"


def label_of(hit: Hit) -> str:
    """The section, unless it only repeats where the passage is (an untitled slide's
    "Slide 3" beside "slide 3"): then the document's title."""
    section = hit.section
    if section and " ".join(section.split()).casefold() == where_of(hit).casefold():
        section = ""
    return section or hit.title


def locator_of(hit: Hit) -> str:
    if hit.line_from is not None:  # from the numbers, whatever an older index stored
        return f"#line={hit.line_from},{hit.line_to or hit.line_from}"
    if hit.locator:
        return f"#{hit.locator}"
    unit = unit_of(hit.kind)
    if unit and hit.page_from is not None:
        return f"#{unit}={hit.page_from}"
    return f"#char={hit.char_from},{hit.char_to}"


def address_fields(hit: Hit) -> dict:
    """The locator's parts as separate fields (search --json): the page (slide, message)
    range, the sheet and its A1 range, the symbol and its 1-based line range."""
    unit = unit_of(hit.kind) or "page"
    out: dict = {unit: hit.page_from, f"{unit}_from": hit.page_from, f"{unit}_to": hit.page_to}
    if hit.locator and hit.locator.startswith("sheet="):
        frag = dict(part.split("=", 1) for part in hit.locator.split("&"))
        out |= {"sheet": unquote(frag["sheet"]), "range": frag.get("range")}
    if hit.line_from is not None:
        out |= {"symbol": hit.symbol, "start_line": hit.line_from, "end_line": hit.line_to}
    return out


def by_document(hits: list[Hit]) -> list[Hit]:
    """The hits grouped by document: documents in the order of their best hit, each
    document's passages in rank order (what a reader scanning for sources wants)."""
    groups: dict[int, list[Hit]] = {}
    for h in hits:
        groups.setdefault(h.doc_id, []).append(h)
    return [h for group in groups.values() for h in group]


def cite(hits: list[Hit]) -> list[Citation]:
    out = []
    for n, h in enumerate(hits, start=1):
        dense = h.scores.get("dense")
        out.append(
            Citation(
                n,
                h.doc_id,
                h.name,
                h.path,
                label_of(h),
                locator_of(h),
                h.page_from if unit_of(h.kind) else None,
                h.char_from,
                h.char_to,
                h.content,
                None if dense is None else round(1.0 - dense, 6),
                h.weak_match,
                where_of(h),
                h.reading,
            )  # fmt: skip
        )
    return out


def build_context(question: str, citations: list[Citation]) -> str:
    """The numbered-sources prompt: answer only from the sources, cite every claim as [n]."""
    blocks = "\n\n".join(
        f"[{c.index}] {c.document_name} - {c.label} ({c.locator})"
        f"{' [weak match: may not be about the question]' if c.weak_match else ''}\n"
        f"{c.quote if c.reading is None else c.reading}"
        for c in citations
    )
    weak = any(c.weak_match for c in citations)
    return (
        "Answer using ONLY the numbered sources below. Cite every claim as [n].\n"
        "If the sources do not contain the answer, say so and stop.\n"
        + ("Sources marked [weak match] are only loosely related: use them only if they "
           "really answer the question.\n" if weak else "")
        + "\n"
        f"SOURCES\n{blocks or '(none: nothing in the library is close enough)'}\n\n"
        f"QUESTION\n{question}"
    )


@dataclass(frozen=True)
class ParsedLocator:
    path: str
    page: int | None  # the number of a page, slide or message
    char_from: int | None
    char_to: int | None
    unit: str | None = None
    line_from: int | None = None  # lines line_from..line_to, numbered from 1
    line_to: int | None = None
    sheet: str | None = None  # a spreadsheet's sheet and its A1 rows (row_from..row_to)
    row_from: int | None = None
    row_to: int | None = None


def _fragment(tail: str) -> dict[str, str] | None:
    parts = [p for p in tail.split("&") if p]
    if not parts or not all("=" in p and p.split("=", 1)[0] in _KEYS for p in parts):
        return None
    return dict(p.split("=", 1) for p in parts)


def _pair(value: str, citation: str, what: str) -> tuple[int, int]:
    try:
        a, b = (int(x) for x in value.split(","))
    except ValueError:
        raise KbError(f"bad {what} range in {citation!r}: expected two numbers FROM,TO") from None
    if b < a:
        raise KbError(f"bad {what} range in {citation!r}: {a} > {b}")
    return a, b


def parse_citation(citation: str) -> ParsedLocator:
    """`PATH#char=a,b`, `PATH#page=N`, `PATH#slide=N&char=a,b`, `PATH#line=a,b`, ..."""
    text = citation.strip(" \t\r\n")
    cut = text.rfind("#")
    frag = _fragment(text[cut + 1 :]) if cut > 0 else None
    numbered = [k for k in ("page", "slide", "message") if frag and k in frag]
    if frag is None or not ({"char", "line", "sheet"} & set(frag) or numbered):
        raise KbError(
            f"not a citation: {citation!r}; expected PATH# and one of char=FROM,TO, page=N, "
            "slide=N, message=N, line=FROM,TO or sheet=NAME&range=A1:C22"
        )
    unit = numbered[0] if numbered else None
    try:
        page = int(frag[unit]) if unit else None
    except ValueError:
        raise KbError(f"bad {unit} number in {citation!r}") from None
    a = b = lf = lt = None
    if "char" in frag:
        a, b = _pair(frag["char"], citation, "character")
    if "line" in frag:
        value = frag["line"] if "," in frag["line"] else f"{frag['line']},{frag['line']}"
        lf, lt = _pair(value, citation, "line")
        if lf < 1:
            raise KbError(f"bad line range in {citation!r}: lines are numbered from 1")
    sheet = r1 = r2 = None
    if "sheet" in frag:
        sheet = unquote(frag["sheet"])
        if "range" in frag:
            r1, r2 = a1_rows(frag["range"], citation)
    return ParsedLocator(text[:cut], page, a, b, unit, lf, lt, sheet, r1, r2)


_A1 = re.compile(r"\$?[A-Za-z]{1,3}\$?(\d+)")


def a1_rows(value: str, citation: str = "") -> tuple[int, int]:
    """The rows an A1 range spans: "A1:C22" is rows 1 to 22, "B7" row 7."""
    ends = [_A1.fullmatch(part) for part in value.split(":")]
    if not 1 <= len(ends) <= 2 or not all(ends):
        raise KbError(f"bad cell range {value!r} in {citation or value!r}: expected A1:C22 or B7")
    rows = [int(m.group(1)) for m in ends]
    return min(rows), max(rows)
