#!/usr/bin/env python3
"""A development library of office files and mail from a Markdown question set (issue #25):
each article written as a Word document, a slide deck, a workbook or an e-mail, the
questions and needles kept, so the gate is measured on what those formats make of the
same text (a slide per paragraph, a sheet row per paragraph, a message with headers).

    .venv/bin/python tools/office_squad.py SET OUT --kind docx|pptx|xlsx|eml
    # SET: a folder with corpus/*.md and golden.jsonl (resources/eval/squad-public, or a
    # split from tools/split_squad.py); OUT gets corpus/ and golden.jsonl

Each article's first line is its title ("# Black Death"), the rest its paragraphs; what a
format shows of them is the text word for word, so every needle still stands in it.
"""

from __future__ import annotations

import argparse
import shutil
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path


def article(path: Path) -> tuple[str, list[str]]:
    lines = path.read_text(encoding="utf-8").split("\n\n")
    title = lines[0].lstrip("# ").strip()
    return title, [p.strip() for p in lines[1:] if p.strip()]


def docx(title: str, paragraphs: list[str], out: Path) -> None:
    import docx as python_docx

    d = python_docx.Document()
    d.add_heading(title, level=1)
    for p in paragraphs:
        d.add_paragraph(p)
    d.save(str(out.with_suffix(".docx")))


def pptx(title: str, paragraphs: list[str], out: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches, Pt

    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[0])
    first.shapes.title.text = title
    for n, p in enumerate(paragraphs, 1):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"{title} ({n})"
        body = slide.placeholders[1].text_frame
        body.text = p
        for para in body.paragraphs:
            for run in para.runs:
                run.font.size = Pt(12)
        slide.placeholders[1].width = Inches(9)
    deck.save(str(out.with_suffix(".pptx")))


def xlsx(title: str, paragraphs: list[str], out: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Notes"
    sheet.append(["Topic", "Part", "Text"])
    for n, p in enumerate(paragraphs, 1):
        sheet.append([title, n, p])
    book.save(str(out.with_suffix(".xlsx")))


def eml(title: str, paragraphs: list[str], out: Path, n: int) -> None:
    m = EmailMessage()
    m["From"] = "Research Desk <desk@example.org>"
    m["To"] = "Reading Group <group@example.org>"
    m["Subject"] = title
    m["Date"] = format_datetime(datetime(2024, 3, 1, 9, tzinfo=UTC) + timedelta(days=n))
    m.set_content("Hello all,\n\n" + "\n\n".join(paragraphs) + "\n\nBest,\nThe desk\n")
    out.with_suffix(".eml").write_bytes(bytes(m))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("set", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--kind", choices=["docx", "pptx", "xlsx", "eml"], required=True)
    a = ap.parse_args()
    corpus = a.out / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for n, md in enumerate(sorted((a.set / "corpus").glob("*.md"))):
        title, paragraphs = article(md)
        dest = corpus / md.stem
        if a.kind == "eml":
            eml(title, paragraphs, dest, n)
        else:
            {"docx": docx, "pptx": pptx, "xlsx": xlsx}[a.kind](title, paragraphs, dest)
    shutil.copy(a.set / "golden.jsonl", a.out / "golden.jsonl")
    print(f"{a.out}: {n + 1} articles as .{a.kind}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
