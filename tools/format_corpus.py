"""How kbapp reads a folder of real office, OpenDocument, RTF and mail files it was not
built on: per format, how many index, fail (with which reasons) or are unsupported; and for
each Office/OpenDocument file, whether a phrase read straight from its XML is found in that
file by search, with the slide or sheet named in the citation.

    .venv/bin/python tools/format_corpus.py FOLDER [--library DIR] [--json OUT]

FOLDER may hold any mix of files (subfolders are walked). Prints a table, and JSON with
--json. The phrase check uses BM25 (a literal phrase is what it is for) and looks at the
top 8 results.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

from lxml import etree

WORD = re.compile(r"[A-Za-z]{3,}")


def _runs(blob: bytes, tag: str) -> list[str]:
    root = etree.fromstring(blob, etree.XMLParser(resolve_entities=False, recover=True))
    return [el.text for el in root.iter() if isinstance(el.tag, str)
            and el.tag.endswith(tag) and el.text]  # fmt: skip


def _phrase(texts: list[str]) -> str | None:
    """Four or more real words in a row from one run of text: a phrase worth searching."""
    for t in texts:
        words = WORD.findall(t)
        if len(words) >= 4 and len(" ".join(words)) >= 20:
            return " ".join(t.split())[:80]
    return None


def legacy_phrase(path: Path) -> tuple[str, str] | None:
    """A phrase of a Word or PowerPoint 97-2003 file read without kbapp's reader: antiword's
    text for .doc, the raw text records of the PowerPoint stream for .ppt."""
    import shutil
    import struct
    import subprocess

    ext = path.suffix.lower()
    if ext in (".doc", ".dot") and shutil.which("antiword"):
        run = subprocess.run(["antiword", "-w", "0", str(path)], capture_output=True, timeout=60)
        texts = run.stdout.decode("utf-8", "replace").split("\n") if run.returncode == 0 else []
        p = _phrase(texts)
        return (p, "char=") if p else None
    if ext in (".ppt", ".pps", ".pot"):
        import olefile

        try:
            with olefile.OleFileIO(str(path)) as ole:
                data = ole.openstream("PowerPoint Document").read()
        except Exception:  # noqa: BLE001 - unreadable: no phrase to check
            return None
        masters, pos = [], 0  # the masters' "Click to edit" texts are no slide's words
        while pos + 8 <= len(data):
            rtype, length = struct.unpack_from("<HI", data, pos + 2)
            if rtype in (0x03F8, 0x0FC9):  # MainMaster, Handout
                masters.append((pos, pos + 8 + length))
            pos += 8 + length
        texts = []
        for m in re.finditer(rb"\x00\x00(\xa0|\xa8)\x0f", data):
            at = m.start()
            if any(a <= at < z for a, z in masters):
                continue
            length = struct.unpack_from("<I", data, at + 4)[0] if at + 8 <= len(data) else 0
            raw = data[at + 8:at + 8 + length]
            codec = "utf-16-le" if m.group(1) == b"\xa0" else "cp1252"
            texts.append(raw.decode(codec, "replace"))
        p = _phrase(texts)
        return (p, "slide=") if p else None
    return None


def xml_phrase(path: Path) -> tuple[str, str | None] | None:
    """(phrase, expected locator part) read from the file's own XML (or, for 97-2003
    files, by another reader), or None."""
    if path.suffix.lower() in (".doc", ".dot", ".ppt", ".pps", ".pot"):
        return legacy_phrase(path)
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        return None
    names = z.namelist()
    ext = path.suffix.lower()
    try:
        if ext == ".pptx":
            slides = sorted((n for n in names if re.fullmatch(r"ppt/slides/slide\d+\.xml", n)),
                            key=lambda n: int(re.findall(r"\d+", n)[0]))  # fmt: skip
            for n in slides:
                p = _phrase(_runs(z.read(n), "}t"))
                if p:
                    # slide files are numbered by creation, not position: kbapp's slide number
                    # is the position; the check accepts any slide locator and reports both
                    return p, "slide="
        elif ext == ".docx" and "word/document.xml" in names:
            p = _phrase(_runs(z.read("word/document.xml"), "}t"))
            return (p, "char=") if p else None
        elif ext == ".xlsx" and "xl/sharedStrings.xml" in names:
            p = _phrase(_runs(z.read("xl/sharedStrings.xml"), "}t"))
            return (p, "sheet=") if p else None
        elif ext in (".odt", ".ods", ".odp") and "content.xml" in names:
            root = etree.fromstring(z.read("content.xml"),
                                    etree.XMLParser(resolve_entities=False, recover=True))  # fmt: skip
            texts = ["".join(el.itertext()) for el in root.iter()
                     if isinstance(el.tag, str) and el.tag.endswith(("}p", "}h"))]  # fmt: skip
            p = _phrase(texts)
            want = {".odt": "char=", ".ods": "sheet=", ".odp": "slide="}[ext]
            return (p, want) if p else None
    except (KeyError, zipfile.BadZipFile, etree.XMLSyntaxError, OSError):
        return None
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder", type=Path)
    ap.add_argument("--library", type=Path)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()

    from kbapp.cite import cite
    from kbapp.library import Library

    root = a.library or Path(tempfile.mkdtemp(prefix="kbformats-"))
    lib = Library.open(root)
    lib.index([a.folder])
    docs = lib.status().documents
    by_ext: dict[str, Counter] = defaultdict(Counter)
    reasons: dict[str, Counter] = defaultdict(Counter)
    for d in docs:
        name = Path(d.path)
        if "#" in d.path or "::" in d.path:  # attachments and mbox messages: counted apart
            continue
        ext = name.suffix.lower() or "(none)"
        by_ext[ext][d.state] += 1
        if d.state != "indexed" and d.reason:
            reasons[ext][re.sub(r"[:(].*", "", d.reason)[:70]] += 1
    phrases = defaultdict(Counter)
    misses = []
    for d in docs:
        if d.state != "indexed":
            continue
        got = xml_phrase(Path(d.path))
        if got is None:
            continue
        phrase, want = got
        ext = Path(d.path).suffix.lower()
        hits = lib.search(phrase, mode="bm25", top_k=8).hits
        mine = [c.locator for h, c in zip(hits, cite(hits), strict=True) if h.path == d.path]
        ok = any(want in loc for loc in mine)
        phrases[ext]["found" if ok else "missed"] += 1
        if not ok:
            misses.append({"file": d.path, "phrase": phrase,
                           "top": [(h.name, c.locator) for h, c in zip(hits[:3], cite(hits[:3]), strict=True)]})  # fmt: skip
    report = {
        "documents": len(docs),
        "by_format": {
            ext: {
                "files": sum(c.values()), "indexed": c["indexed"], "failed": c["failed"],
                "unsupported": c["unsupported"],
                "indexed_share": round(c["indexed"] / max(1, sum(c.values())), 3),
                "failure_reasons": dict(reasons[ext]),
                "xml_phrase_found": phrases[ext]["found"],
                "xml_phrase_missed": phrases[ext]["missed"],
            }
            for ext, c in sorted(by_ext.items())
        },
        "phrase_misses": misses[:20],
    }  # fmt: skip
    print(f"{'format':<8} {'files':>5} {'indexed':>8} {'failed':>6} {'unsup':>5} {'share':>6}  phrase found")
    for ext, r in report["by_format"].items():
        tried = r["xml_phrase_found"] + r["xml_phrase_missed"]
        print(f"{ext:<8} {r['files']:>5} {r['indexed']:>8} {r['failed']:>6} {r['unsupported']:>5} "
              f"{r['indexed_share']:>6.0%}  {r['xml_phrase_found']}/{tried}")  # fmt: skip
        for reason, n in r["failure_reasons"].items():
            print(f"           {n} x {reason}")
    if a.json:
        a.json.write_text(json.dumps(report, indent=2, ensure_ascii=False))
    lib.close()


if __name__ == "__main__":
    main()
