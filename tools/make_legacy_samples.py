"""How tests/data/legacy/report.doc and deck.ppt were made: a DOCX and a PPTX written
with python-docx / python-pptx, saved as Word 97-2003 and PowerPoint 97-2003 by LibreOffice (the files are committed; kbapp itself needs no office suite).

.venv/bin/python tools/make_legacy_samples.py OUT_DIR   # needs soffice on PATH
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path


def report(path: Path) -> None:
    import docx

    d = docx.Document()
    d.core_properties.title = "Harbour maintenance report"
    d.add_heading("Harbour maintenance report", level=1)
    d.add_paragraph("The north pier was inspected on 12 March; two fenders are worn through.")
    d.add_heading("Dredging", level=2)
    d.add_paragraph(
        "Silt in the inner basin is 40 cm deeper than last year; the contractor "
        "Okafor Marine will dredge the channel before the summer season."
    )
    t = d.add_table(rows=3, cols=3)
    for r, row in enumerate(
        [
            ("Item", "Cost (EUR)", "Due"),
            ("Fenders", "18,000", "May"),
            ("Dredging", "240,000", "June"),
        ]
    ):
        for c, value in enumerate(row):
            t.cell(r, c).text = value
    budget = d.add_paragraph("Budget for the contractor is capped at 18,000 euros per fender set.")
    d.add_comment(
        budget.runs,
        text="Ask the harbour master whether VAT is included.",
        author="Reviewer",
        initials="R",
    )
    d.save(path)


def deck(path: Path) -> None:
    import pptx

    p = pptx.Presentation()
    slides = [
        ("Field season kickoff", "Goals for the spring field season.", ""),
        (
            "Sampling plan",
            "Water samples are taken at dawn from three lakes.",
            "Remind the team to label every bottle with the lake code.",
        ),
        ("Risks", "Late ice on the lakes could delay the first samples.", ""),
    ]
    for title, body, notes in slides:
        s = p.slides.add_slide(p.slide_layouts[1])
        s.shapes.title.text = title
        s.placeholders[1].text = body
        if notes:
            s.notes_slide.notes_text_frame.text = notes
    box = p.slides[2].shapes.add_textbox(
        pptx.util.Inches(1), pptx.util.Inches(5), pptx.util.Inches(6), pptx.util.Inches(1)
    )
    box.text_frame.text = "Backup site: Lake Zweifachtorus, reachable by the forest road."
    p.save(path)


def convert(src: Path, fmt: str, out: Path) -> Path:
    subprocess.run(
        ["soffice", "--headless", "--convert-to", fmt, "--outdir", str(out), str(src)],
        check=True,
        capture_output=True,
    )
    return out / (src.stem + "." + fmt.split(":")[0])


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        report(t / "report.docx")
        deck(t / "deck.pptx")
        convert(t / "report.docx", "doc", out)
        convert(t / "deck.pptx", "ppt", out)
    print("\n".join(str(p) for p in sorted(out.iterdir())))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
