"""The router of seed 001: a single symbol-shaped token goes to BM25, prose to prose mode.

Deliberately narrow: a false positive sends a real question to BM25 (measurably bad on
prose); a false negative only gives up an improvement.
"""

from __future__ import annotations

import re

_SYMBOL_SHAPED = re.compile(r"^[A-Za-z_][\w.\-/:]*$")
_CAMEL_BOUNDARY = re.compile(r"[a-z0-9][A-Z]")
_INNER_MARK = re.compile(r"\w[_.\-/:]\w")
_ALLCAPS = re.compile(r"^[A-Z][A-Z0-9]+$")


def looks_like_symbol(query: str) -> bool:
    """camelCase, snake_case, kebab-case, a.b.c, a/b, ALLCAPS: one token with a boundary."""
    q = query.strip()
    if not q or not _SYMBOL_SHAPED.match(q):
        return False
    return bool(_CAMEL_BOUNDARY.search(q) or _INNER_MARK.search(q) or _ALLCAPS.match(q))


def route(query: str, mode: str, prose_mode: str) -> str:
    """The channel that answers: 'dense', 'bm25' or 'hybrid'."""
    if mode != "auto":
        return mode
    return "bm25" if looks_like_symbol(query) else prose_mode
