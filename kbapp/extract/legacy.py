"""Word 97-2003 (.doc, .dot) and PowerPoint 97-2003 (.ppt, .pps, .pot), read from their
OLE streams with olefile, as [MS-DOC] and [MS-PPT] lay them out; no office suite.

Word: the piece table (the CLX in the table stream) gives the text; the main document
first, then footnotes, comments, endnotes and text boxes, each in its own section at the
end (as for DOCX). Field instructions (HYPERLINK "...", PAGE) are dropped, their results
kept; table cells are "cell | cell" rows. Word 6/95 files (no piece table) fail with a
reason that says so.

PowerPoint: one numbered part per slide in the presentation's order (the slide list),
its title as the section, the text of its placeholders and text boxes, then its notes.
A file written by another tool (a .doc that is really RTF or plain text, as old archives
hold) is read as what it is.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from ..errors import ExtractionError
from .base import Builder, Extracted
from .package import PASSWORD_PROTECTED
from .text import decode, title_from_name


def _open_ole(path: Path, what: str):
    import olefile

    try:
        if not olefile.isOleFile(str(path)):
            return None
        return olefile.OleFileIO(str(path))
    except Exception as exc:  # noqa: BLE001 - olefile raises several types for one meaning
        raise ExtractionError(
            f"the file is damaged or truncated: it is not a readable {what} "
            f"file (olefile says: {exc})"
        ) from exc


def _other_form(path: Path, what: str) -> Extracted:
    """A legacy-named file that is not an OLE file: RTF or plain text (Word opens both)."""
    head = path.read_bytes()[:4096]
    if head.lstrip().startswith(b"{\\rtf"):
        from .office import extract_rtf

        return extract_rtf(path)
    if head.startswith(b"PK\x03\x04"):
        raise ExtractionError(f"the file is a newer Office file named as {what}: rename it "
                              f"to .{'docx' if what.startswith('Word') else 'pptx'}")  # fmt: skip
    if b"\x00" in head:
        raise ExtractionError(f"the file is damaged or is not a {what} file")
    text, warnings = decode(path.read_bytes(), path.name)
    b = Builder()
    for para in re.split(r"\n\s*\n", text):
        b.block(para)
    return b.extracted(title_from_name(path), "doc", warnings)


def _title(ole, path: Path) -> str:
    try:
        meta = ole.get_metadata()
        raw = meta.title or b""
        title = raw.decode(_codec(meta.codepage), "replace") if isinstance(raw, bytes) else str(raw)
    except Exception:  # noqa: BLE001 - a broken property set only costs the title
        title = ""
    title = " ".join(title.replace("\x00", " ").split())
    return title or title_from_name(path)


# Property-set code pages Python names otherwise (Mac ones, UTF-8 written as -535).
_CODEPAGES = {65001: "utf-8", -535: "utf-8", 1200: "utf-16-le", 10000: "mac_roman",
              10001: "shift_jis", 10003: "euc_kr", 10008: "gb2312", 10002: "big5"}  # fmt: skip


def _codec(codepage) -> str:
    import codecs

    name = _CODEPAGES.get(codepage) or f"cp{codepage}"
    try:
        codecs.lookup(name)
    except (LookupError, TypeError):
        return "cp1252"
    return name


# -- Word -----------------------------------------------------------------------------------

# Characters that mark structure in Word's text: paragraph and cell ends, breaks, anchors.
_WORD_MARKS = str.maketrans({
    "\r": "\n", "\x0b": "\n", "\x0c": "\n", "\x0e": "\n",  # paragraph, line, page/section, column
    "\x1e": "-", "\x1f": None, "\xa0": " ",  # non-breaking and optional hyphens, nbsp
    "\x01": None, "\x02": None, "\x03": None, "\x04": None, "\x05": None, "\x08": None,
})  # fmt: skip
# The stories after the main text, in CP order, as sections named for a reader.
_STORIES = ("", "Footnotes", "Headers and footers", "Comments", "Endnotes", "Text boxes")


def _word_text(ole) -> tuple[str, list[int], bool]:
    """The document's whole text (every story, in CP order), the story lengths, and
    whether the file is a Word 97 or later one (False: Word 6/95, no piece table)."""
    if not ole.exists("WordDocument"):
        raise ExtractionError("the file is not a Word document (it has no WordDocument stream)")
    wd = ole.openstream("WordDocument").read()
    if len(wd) < 0x1A2 + 8:
        raise ExtractionError("the Word document is truncated")
    ident, nfib = struct.unpack_from("<HH", wd, 0)
    flags = struct.unpack_from("<H", wd, 0x0A)[0]
    if ident != 0xA5EC:
        raise ExtractionError("the file is not a Word document (its header is not Word's)")
    if flags & 0x0100:  # fEncrypted
        raise ExtractionError(PASSWORD_PROTECTED)
    if nfib < 0xC1:
        return "", [], False
    csw = struct.unpack_from("<H", wd, 32)[0]
    lw_at = 34 + 2 * csw
    cslw = struct.unpack_from("<H", wd, lw_at)[0]
    lw = struct.unpack_from(f"<{cslw}i", wd, lw_at + 2)
    stories = [max(0, n) for n in lw[3:11]]  # ccpText, Ftn, Hdd, Mcr, Atn, Edn, Txbx, HdrTxbx
    fc_at = lw_at + 2 + 4 * cslw + 2
    fc_clx, lcb_clx = struct.unpack_from("<Ii", wd, fc_at + 33 * 8)
    table = "1Table" if flags & 0x0200 else "0Table"
    if not ole.exists(table):
        raise ExtractionError("the Word document is damaged (its table stream is missing)")
    tbl = ole.openstream(table).read()
    clx = tbl[fc_clx : fc_clx + lcb_clx]
    pos = 0
    while pos < len(clx) and clx[pos] == 0x01:  # Prc: formatting, skipped
        pos += 3 + struct.unpack_from("<h", clx, pos + 1)[0]
    if pos + 5 > len(clx) or clx[pos] != 0x02:
        raise ExtractionError("the Word document is damaged (its piece table cannot be read)")
    lcb = struct.unpack_from("<I", clx, pos + 1)[0]
    plc = clx[pos + 5 : pos + 5 + lcb]
    n = (len(plc) - 4) // 12
    cps = struct.unpack_from(f"<{n + 1}I", plc, 0)
    parts = []
    for i in range(n):
        fc = struct.unpack_from("<I", plc, 4 * (n + 1) + 8 * i + 2)[0]
        count = cps[i + 1] - cps[i]
        if fc & 0x40000000:
            at = (fc & 0x3FFFFFFF) // 2
            parts.append(wd[at : at + count].decode("cp1252", "replace"))
        else:
            at = fc & 0x3FFFFFFF
            parts.append(wd[at : at + 2 * count].decode("utf-16-le", "replace"))
    return "".join(parts), stories, True


def _without_field_codes(text: str) -> str:
    """A field is \\x13 instructions \\x14 result \\x15: the result stays (a hyperlink's
    words, a date), the instructions go; a field without a result goes whole."""
    out: list[str] = []
    stack: list[bool] = []  # per open field: are we in its result part?
    for ch in text:
        if ch == "\x13":
            stack.append(False)
        elif ch == "\x14" and stack:
            stack[-1] = True
        elif ch == "\x15" and stack:
            stack.pop()
        elif all(stack):
            out.append(ch)
    return "".join(out)


def _word_story(text: str) -> list[str]:
    text = _without_field_codes(text)
    text = text.replace("\x07\r", "\x07").replace("\x07\x07", "\n").replace("\x07", " | ")
    text = text.translate(_WORD_MARKS)
    return [p for p in (" ".join(line.split()) for line in text.split("\n")) if p]


def extract_doc(path: Path) -> Extracted:
    try:
        return _read_doc(path)
    except (struct.error, IndexError, ValueError) as exc:
        raise ExtractionError(
            f"the Word 97-2003 document is damaged: its text cannot be read ({exc})"
        ) from exc


def _read_doc(path: Path) -> Extracted:
    ole = _open_ole(path, "Word 97-2003")
    if ole is None:
        return _other_form(path, "Word 97-2003 (.doc)")
    with ole:
        text, stories, modern = _word_text(ole)
        title = _title(ole, path)
    if not modern:
        raise ExtractionError("the file is a Word 6/95 document (older than Word 97): kbapp "
                              "reads Word 97 and later; open it in Word or LibreOffice and "
                              "save it as .docx")  # fmt: skip
    b = Builder()
    at = 0
    lengths = [stories[0], stories[1], stories[2], stories[4], stories[5], stories[6]]
    for n, length in enumerate(lengths):
        story = text[at : at + length]
        at += length
        if n == 2:  # headers and footers: their separators and repeats are noise here
            continue
        paras = _word_story(story)
        if n and paras:
            b.block(_STORIES[n], level=1)
        for para in paras:
            b.block(para)
    return b.extracted(title, "doc")


# -- PowerPoint ----------------------------------------------------------------------------

_CONTAINER = 0x0F
_DOCUMENT, _SLIDE, _NOTES, _SLIDE_LIST = 0x03E8, 0x03EE, 0x03F0, 0x0FF0
_SLIDE_PERSIST, _SLIDE_ATOM, _PERSIST_DIR = 0x03F3, 0x03EF, 0x1772
_TEXT_HEADER, _TEXT_CHARS, _TEXT_BYTES = 0x0F9F, 0x0FA0, 0x0FA8
_TITLES = {0, 6}  # TextHeaderAtom: title, centred title


def _records(data: bytes, start: int, end: int):
    """(type, instance, body start, body end, is container) of each record in a range."""
    pos = start
    while pos + 8 <= end:
        ver_inst, rtype, length = struct.unpack_from("<HHI", data, pos)
        body = pos + 8
        stop = min(end, body + length)
        yield rtype, ver_inst >> 4, body, stop, (ver_inst & 0x0F) == _CONTAINER
        pos = body + length


def _texts(data: bytes, start: int, end: int) -> list[tuple[int, str]]:
    """Every text atom under a record, with the text type its header gave (-1 unknown)."""
    out: list[tuple[int, str]] = []
    kind = -1

    def walk(a: int, b: int) -> None:
        nonlocal kind
        for rtype, _, s, e, container in _records(data, a, b):
            if container:
                walk(s, e)
            elif rtype == _TEXT_HEADER and e - s >= 4:
                kind = struct.unpack_from("<I", data, s)[0]
            elif rtype == _TEXT_CHARS:
                out.append((kind, data[s:e].decode("utf-16-le", "replace")))
            elif rtype == _TEXT_BYTES:
                out.append((kind, data[s:e].decode("cp1252", "replace")))

    walk(start, end)
    return out


def _persist_offsets(data: bytes) -> dict[int, int]:
    """Persist id -> stream offset, from every PersistDirectoryAtom (a later, incremental
    save's entries win)."""
    found: dict[int, int] = {}
    for rtype, _, s, e, _ in _records(data, 0, len(data)):
        if rtype != _PERSIST_DIR:
            continue
        pos = s
        while pos + 4 <= e:
            head = struct.unpack_from("<I", data, pos)[0]
            first, count = head & 0xFFFFF, head >> 20
            pos += 4
            for k in range(count):
                if pos + 4 > e:
                    break
                found[first + k] = struct.unpack_from("<I", data, pos)[0]
                pos += 4
    return found


def _record_at(data: bytes, offset: int, rtype: int) -> tuple[int, int] | None:
    if not 0 <= offset <= len(data) - 8:
        return None
    _, t, length = struct.unpack_from("<HHI", data, offset)
    return (offset + 8, min(len(data), offset + 8 + length)) if t == rtype else None


def _slide_text(texts: list[tuple[int, str]]) -> tuple[str, list[str]]:
    title, body, seen = "", [], set()
    for kind, raw in texts:
        text = raw.replace("\r", "\n").replace("\x0b", "\n").strip()
        if not text or text in seen:
            continue
        seen.add(text)
        if kind in _TITLES and not title:
            title = " ".join(text.split())
        else:
            body.append(text)
    return title, body


def extract_ppt(path: Path) -> Extracted:
    try:
        return _read_ppt(path)
    except (struct.error, IndexError, ValueError) as exc:
        raise ExtractionError(
            f"the PowerPoint 97-2003 presentation is damaged: its text cannot be read ({exc})"
        ) from exc


def _read_ppt(path: Path) -> Extracted:
    ole = _open_ole(path, "PowerPoint 97-2003")
    if ole is None:
        return _other_form(path, "PowerPoint 97-2003 (.ppt)")
    with ole:
        if ole.exists("EncryptedSummary"):
            raise ExtractionError(PASSWORD_PROTECTED)
        if not ole.exists("PowerPoint Document"):
            raise ExtractionError("the file is not a PowerPoint presentation (it has no "
                                  "PowerPoint Document stream)")  # fmt: skip
        data = ole.openstream("PowerPoint Document").read()
        title = _title(ole, path)
    persist = _persist_offsets(data)
    doc = next(((s, e) for t, _, s, e, _ in _records(data, 0, len(data)) if t == _DOCUMENT), None)
    if doc is None:
        raise ExtractionError("the presentation is damaged (its document record is missing)")
    slides: list[tuple[int, list[tuple[int, str]]]] = []  # persist id, slide-list texts
    notes_of: dict[int, int] = {}  # notes id (what a slide names) -> persist id
    for rtype, inst, s, e, _ in _records(data, *doc):
        if rtype == _SLIDE_LIST and inst == 2:  # the notes list
            for t, _, a, z, _ in _records(data, s, e):
                if t == _SLIDE_PERSIST and z - a >= 16:
                    pid, _, _, notes_id = struct.unpack_from("<4I", data, a)
                    notes_of[notes_id] = pid
        if rtype != _SLIDE_LIST or inst != 0:
            continue
        kind = -1
        for t, _, a, z, _ in _records(data, s, e):
            if t == _SLIDE_PERSIST and z - a >= 4:
                slides.append((struct.unpack_from("<I", data, a)[0], []))
            elif t == _TEXT_HEADER and z - a >= 4:
                kind = struct.unpack_from("<I", data, a)[0]
            elif slides and t in (_TEXT_CHARS, _TEXT_BYTES):
                codec = "utf-16-le" if t == _TEXT_CHARS else "cp1252"
                slides[-1][1].append((kind, data[a:z].decode(codec, "replace")))
    b = Builder()
    for number, (pid, listed) in enumerate(slides, start=1):
        own = _record_at(data, persist.get(pid, -1), _SLIDE) if pid in persist else None
        texts = listed + (_texts(data, *own) if own else [])
        heading, body = _slide_text(texts)
        notes: list[str] = []
        atom = next(((a, z) for t, _, a, z, _ in _records(data, *own) if t == _SLIDE_ATOM),
                    None) if own else None  # fmt: skip
        if atom and atom[1] - atom[0] >= 20:
            notes_id = struct.unpack_from("<I", data, atom[0] + 16)[0]
            pid_notes = notes_of.get(notes_id, -1)
            spot = _record_at(data, persist.get(pid_notes, -1), _NOTES) if notes_id else None
            if spot:
                notes = [t for k, t in _texts(data, *spot) if k == 2 and t.strip()]
        b.start_unit(number)
        b.block(heading or f"Slide {number}", level=1)
        for text in body:
            b.block(text)
        if notes:
            b.block("Notes: " + "\n".join(n.replace("\r", "\n") for n in notes))
    b.end_unit()
    return b.extracted(title, "ppt")
