"""Code: a definition (class, function) is a passage where it fits; a long one is cut at
its inner definitions, then at lines; small neighbours are packed together."""

from __future__ import annotations

import bisect
import re

from ..config import ChunkOptions
from ..extract.base import Extracted, Symbol
from .base import DEFAULT_OPTIONS, Chunk, Chunked, TokenCounter, header, trim
from .sentences import bounded, split_middle

# A definition is kept whole up to twice the prose target: a function cut in two is
# harder to read than a long paragraph. The encoder window still bounds every chunk.
CODE_TARGET_FACTOR = 2
CODE_SMALL = 160  # characters: a piece this small is packed with its neighbour
_IDENT_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def identifier_parts(text: str) -> str:
    """The words inside identifiers (`handleAuthCallback` -> "handle auth callback",
    `parse_http_url` -> "parse http url"), so full-text search finds a symbol by its parts."""
    out: list[str] = []
    for m in _IDENT.finditer(text):
        word = m.group(0)
        parts = [p for piece in word.split("_") for p in _IDENT_PART.findall(piece)]
        if len(parts) > 1:
            out.extend(p.lower() for p in parts)
    return " ".join(out)


class _Lines:
    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        """1-based line of a character offset."""
        return bisect.bisect_right(self.starts, offset)

    def cuts(self, a: int, b: int) -> list[int]:
        lo, hi = bisect.bisect_right(self.starts, a), bisect.bisect_left(self.starts, b)
        return self.starts[lo:hi]


def chunk_code(
    ex: Extracted,
    opts: ChunkOptions = DEFAULT_OPTIONS,
    count_tokens: TokenCounter | None = None,
    window: int | None = None,
) -> Chunked:
    """Chunks along the code's definitions: each function, method or small class whole
    (small neighbours packed together), a large class as its header and its members, a
    long function cut at line ends; the code between definitions (imports, module-level
    statements) packed by lines. Each chunk names its symbol(s) and its line range."""
    text, result, lines = ex.text, Chunked(), _Lines(ex.text)
    target = opts.target * CODE_TARGET_FACTOR
    symbols = sorted(ex.symbols or [], key=lambda s: (s.at, -s.end))

    def kids_of(a: int, b: int, depth: int) -> list[Symbol]:
        return [s for s in symbols if s.depth == depth and a <= s.at and s.end <= b]

    def by_lines(a: int, b: int) -> list[tuple[int, int]]:
        """[a, b) cut at line starts into pieces of at most the target (a longer line
        is cut at spaces, as prose is)."""
        segs, start, last = [], a, None
        for cut in [*lines.cuts(a, b), b]:
            if cut - start > target and last is not None and last > start:
                segs.append((start, last))
                start = last
            last = cut
        segs.append((start, b))
        return bounded(text, [(x, y) for x, y in segs if y > x], target)

    pieces: list[tuple[int, int, str | None]] = []
    BARRIER = (-1, -1, None)

    def cover(a: int, b: int, depth: int, owner: str | None) -> None:
        pos = a
        for k in kids_of(a, b, depth):
            if k.at < pos:
                continue
            pieces.extend((x, y, owner) for x, y in by_lines(pos, k.at))
            if kids_of(k.at, k.end, depth + 1):  # a class: its header, then each member
                pieces.append(BARRIER)  # members pack among themselves, not with outsiders
                cover(k.at, k.end, depth + 1, k.name)
                pieces.append(BARRIER)
            else:
                pieces.extend((x, y, k.name) for x, y in by_lines(k.at, k.end))
            pos = k.end
        pieces.extend((x, y, owner) for x, y in by_lines(pos, b))

    cover(0, len(text), 0, None)
    pieces = [
        (x, y, n) if a >= 0 else BARRIER
        for a, b, n in pieces for x, y in [trim(text, a, b) if a >= 0 else (0, 1)] if y > x
    ]  # fmt: skip

    def emit(a: int, b: int, names: list[str], symbol: str | None) -> None:
        content = text[a:b]
        section = ", ".join(dict.fromkeys(names))
        head = header(ex.title, section) if opts.header else ""
        tokens = None
        if count_tokens is not None:
            tokens = count_tokens(head + content)
            if window is not None and tokens > window and b - a > 1:
                mid = (a + b) // 2
                cuts = lines.cuts(a + 1, b) or [split_middle(text, a, b)]
                cut = min(cuts, key=lambda c: abs(c - mid))
                if a < cut < b:
                    result.split_for_window += 1
                    for x, y in (trim(text, a, cut), trim(text, cut, b)):
                        if y > x:
                            emit(x, y, names, symbol)
                    return
            result.total_tokens += min(tokens, window or tokens)
        lf, lt = lines.line_of(a), lines.line_of(b - 1)
        result.chunks.append(Chunk(
            len(result.chunks), section, a, b, content, head + content, None, None, tokens,
            f"line={lf},{lt}", symbol, lf, lt,
        ))  # fmt: skip

    def flush(run: list[tuple[int, int, str | None]]) -> None:
        named = [(y - x, n) for x, y, n in run if n]
        main = max(named, key=lambda t: t[0])[1] if named else None  # the chunk's main one
        emit(run[0][0], run[-1][1], [n for _, n in named], main)

    # Two substantial definitions never share a chunk; small pieces (a class header, a
    # one-line method, imports) join their neighbour while the chunk stays in the target.
    run: list[tuple[int, int, str | None]] = []
    for piece in pieces:
        if piece is BARRIER or piece == BARRIER:
            if run:
                flush(run)
            run = []
            continue
        if run:
            size, add = run[-1][1] - run[0][0], piece[1] - piece[0]
            if piece[1] - run[0][0] > target or (size >= CODE_SMALL and add >= CODE_SMALL):
                flush(run)
                run = []
        run.append(piece)
    if run:
        flush(run)
    return result
