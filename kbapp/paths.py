"""File names as Linux has them: any bytes but NUL and '/', not always valid UTF-8.

Python hands such a name over as a str with lone surrogates (PEP 383 surrogateescape).
SQLite stores only valid text, so the storage layer maps each escaped byte to a
private-use code point (OPTU-8's U+EF80..U+EFFF, which no real name uses) and back:
a name that is valid UTF-8 is stored unchanged. What a person reads (CLI, window) is
`display_path`: undecodable bytes and control characters shown as escapes, one line.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_SURROGATE = re.compile("[\udc80-\udcff]")
_PRIVATE = re.compile("[\uef80-\uefff]")
_ANY_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# C0 controls but tab, line feed and carriage return; DEL; the C1 controls.
_UNSEEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SHIFT = 0xEF80 - 0xDC80


def to_db(path: str) -> str:
    """A file name as SQLite can hold it (reversible with from_db)."""
    if not _SURROGATE.search(path):
        return path
    return _SURROGATE.sub(lambda m: chr(ord(m.group()) + _SHIFT), path)


def from_db(stored: str) -> str:
    """The file name the operating system knows, from its stored form."""
    if not _PRIVATE.search(stored):
        return stored
    return _PRIVATE.sub(lambda m: chr(ord(m.group()) - _SHIFT), stored)


def display_path(path: str) -> str:
    """One printable line: bad bytes as \\xNN, control characters as \\n, \\t, \\x01."""
    raw = path.encode("utf-8", "surrogateescape")
    text = raw.decode("utf-8", "backslashreplace")
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def no_surrogates(text: str) -> str:
    """Text safe to encode as UTF-8: a lone surrogate (an undecodable argument byte, a
    broken string) becomes U+FFFD."""
    return _ANY_SURROGATE.sub("\ufffd", text)


def printable(text: str) -> str:
    """`text` with lone surrogates as U+FFFD and control characters (NUL, backspace, form
    feed, C1 codes of a mis-decoded file: nothing a reader sees) as spaces, one code point
    for one, so every offset into it stays true."""
    return _UNSEEN.sub(" ", no_surrogates(text))


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
