"""Plain text and Markdown: the canonical text is the decoded file, unchanged.

So `#char=from,to` addresses the file itself, as RFC 5147 fragments do for text/plain.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import ExtractionError
from .base import Extracted, Heading

_ATX_START = re.compile(r"^#{1,6}[ \t]", re.M)
_SETEXT = re.compile(r"^([^\n]+)\n(=+|-+)[ \t]*\r?$", re.M)  # linear: no nested stars
_FENCE = re.compile(r"^(```|~~~)", re.M)


def decode(data: bytes, name: str) -> tuple[str, list[str]]:
    """Bytes to text, saying what was assumed. Binary data is refused, not mangled."""
    warnings: list[str] = []
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace"), warnings
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), warnings
        except UnicodeDecodeError as exc:
            raise ExtractionError(f"{name}: starts as UTF-16 but is not valid UTF-16") from exc
    sample = data[:8192]
    if b"\x00" in sample:
        raise ExtractionError(f"{name}: contains binary data, not text")
    try:
        return data.decode("utf-8"), warnings
    except UnicodeDecodeError:
        pass
    text = data.decode("cp1252", errors="replace")
    controls = sum(1 for ch in text[:8192] if ord(ch) < 32 and ch not in "\t\n\r\f")
    if controls > len(text[:8192]) * 0.05:
        raise ExtractionError(f"{name}: contains binary data, not text")
    warnings.append("not valid UTF-8: read as Windows-1252; some characters may be wrong")
    return text, warnings


def _code_fences(text: str) -> list[tuple[int, int]]:
    marks = [m.start() for m in _FENCE.finditer(text)]
    spans = []
    for i in range(0, len(marks) - 1, 2):
        spans.append((marks[i], marks[i + 1]))
    if len(marks) % 2:
        spans.append((marks[-1], len(text)))
    return spans


def _atx(text: str, at: int) -> Heading | None:
    """An ATX heading line ("## Title ##") parsed by hand: linear in the line's length
    (a regex with nested optional runs was cubic on a heading of many spaces)."""
    end = text.find("\n", at)
    end = len(text) if end == -1 else end
    line = text[at:end]
    level = len(line) - len(line.lstrip("#"))
    title = line[level:].rstrip(" \t\r").rstrip("#").strip(" \t")
    if not title:
        return None
    line_end = at + len(line.rstrip("\r"))
    return Heading(at, line_end, level, title)


def markdown_headings(text: str) -> list[Heading]:
    fences = _code_fences(text)

    def in_code(pos: int) -> bool:
        return any(a <= pos < b for a, b in fences)

    heads = [h for h in map(lambda m: _atx(text, m.start()), _ATX_START.finditer(text))
             if h is not None and not in_code(h.at)]  # fmt: skip
    for m in _SETEXT.finditer(text):
        line = m.group(1).strip()
        if (
            not line
            or in_code(m.start())
            or line.startswith(("#", "-", "*", "|", ">"))
            or len(line) > 120
        ):
            continue
        heads.append(Heading(m.start(), m.end(), 1 if m.group(2)[0] == "=" else 2, line))
    heads.sort(key=lambda h: h.at)
    return heads


def title_from_name(path: Path) -> str:
    """A readable title from a file name (an undecodable byte shows as U+FFFD)."""
    stem = path.stem.replace("_", " ").strip() or path.name
    return os.fsencode(stem).decode("utf-8", "replace")


def extract_text(path: Path, markdown: bool) -> Extracted:
    text, warnings = decode(path.read_bytes(), path.name)
    headings = markdown_headings(text) if markdown else []
    title = next((h.title for h in headings if h.level == 1), None) or title_from_name(path)
    return Extracted(
        text=text,
        title=title,
        kind="markdown" if markdown else "text",
        headings=headings,
        warnings=warnings,
    )
