"""Citations: kbapp, not a model, attaches document, label and locator to each source.

Locators: `#page=N` (PDF Open Parameters, 1-based physical page) for paged sources and
`#char=from,to` (RFC 5147 style, offsets in the canonical text) for all; paged sources
carry both. The model is asked to write [n] and never a link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import KbError
from .search.engine import Hit

_LOCATOR = re.compile(r"^(?P<path>.*?)#(?P<frag>(?:page=\d+)?(?:&?char=\d+,\d+)?)$", re.S)


@dataclass(frozen=True)
class Citation:
    index: int
    document_id: int
    document_name: str
    path: str
    label: str
    locator: str  # "#page=N" for paged sources, "#char=a,b" otherwise
    page: int | None
    char_from: int
    char_to: int
    quote: str  # the chunk's own content, never the embedded text with its header
    cosine_distance: float | None
    weak_match: bool

    @property
    def fragment(self) -> str:
        """The full address: page and character range where both apply."""
        char = f"char={self.char_from},{self.char_to}"
        return f"#page={self.page}&{char}" if self.page is not None else f"#{char}"

    @property
    def uri(self) -> str:
        return f"{self.path}{self.fragment}"


def label_of(hit: Hit) -> str:
    return hit.section or hit.title


def locator_of(hit: Hit) -> str:
    if hit.page_from is not None:
        return f"#page={hit.page_from}"
    return f"#char={hit.char_from},{hit.char_to}"


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
                h.page_from,
                h.char_from,
                h.char_to,
                h.content,
                None if dense is None else round(1.0 - dense, 6),
                h.weak_match,
            )  # fmt: skip
        )
    return out


def build_context(question: str, citations: list[Citation]) -> str:
    """The numbered-sources prompt: answer only from the sources, cite every claim as [n]."""
    blocks = "\n\n".join(
        f"[{c.index}] {c.document_name} - {c.label} ({c.locator})\n{c.quote}" for c in citations
    )
    return (
        "Answer using ONLY the numbered sources below. Cite every claim as [n].\n"
        "If the sources do not contain the answer, say so and stop.\n\n"
        f"SOURCES\n{blocks or '(none: nothing in the library is close enough)'}\n\n"
        f"QUESTION\n{question}"
    )


@dataclass(frozen=True)
class ParsedLocator:
    path: str
    page: int | None
    char_from: int | None
    char_to: int | None


def parse_citation(citation: str) -> ParsedLocator:
    """`PATH#char=a,b`, `PATH#page=N` or `PATH#page=N&char=a,b`."""
    m = _LOCATOR.match(citation.strip(" \t\r\n"))
    if not m or not m.group("frag"):
        raise KbError(f"not a citation: {citation!r}; expected PATH#char=FROM,TO or PATH#page=N")
    frag = dict(part.split("=", 1) for part in m.group("frag").lstrip("&").split("&"))
    page = int(frag["page"]) if "page" in frag else None
    a = b = None
    if "char" in frag:
        a, b = (int(x) for x in frag["char"].split(","))
        if b < a:
            raise KbError(f"bad character range in {citation!r}: {a} > {b}")
    return ParsedLocator(m.group("path"), page, a, b)
