"""The README screenshots, from a real window under Xvfb: the first start, indexing in
progress, a PDF result, a spreadsheet and a slide citation, a search narrowed to PDFs with
one document's passages opened under its card, a refused off-topic question, and the
documents tab.

xvfb-run -s "-screen 0 1400x900x24" .venv/bin/python tools/screenshot.py docs/screenshot.png
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pymupdf
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "resources" / "eval" / "squad-public" / "corpus"


def article_pdf(md: Path, out: Path) -> None:
    """A real multi-page PDF of one article (title, paragraphs, page numbers)."""
    text = md.read_text(encoding="utf-8")
    title, _, body = text.partition("\n")
    html = f"<h1>{title.lstrip('# ')}</h1>" + "".join(
        f"<p>{p}</p>" for p in body.split("\n\n") if p.strip()
    )
    story = pymupdf.Story(
        html=html, user_css="p{font-size:11pt;line-height:1.4} h1{font-size:20pt}"
    )
    writer = pymupdf.DocumentWriter(str(out))
    more = True
    while more:
        dev = writer.begin_page(pymupdf.paper_rect("a4"))
        more, _ = story.place(pymupdf.Rect(60, 60, 535, 780))
        story.draw(dev)
        writer.end_page()
    writer.close()


def office_files(folder: Path) -> None:
    """A budget workbook and a short deck, made with the libraries users' files come from."""
    import openpyxl
    import pptx

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Budget 2026"
    ws.append(["Item", "Owner", "Cost (EUR)", "Quarter"])
    rows = [("Field microscopes", "Lab", 12400, "Q1"), ("Sample freezer", "Lab", 8900, "Q2"),
            ("Conference travel", "Team", 6100, "Q2"), ("Cloud storage", "IT", 2300, "Q3"),
            ("Oxygen sensors", "Lab", 4750, "Q3"), ("Safety training", "HR", 1800, "Q4")]
    for r in rows:
        ws.append(list(r))
    wb.save(folder / "Lab budget.xlsx")
    prs = pptx.Presentation()
    for title, body in [("Project kickoff", "Goals for the spring field season."),
                        ("Sampling plan", "Water samples are taken at dawn from three lakes; "
                         "oxygen is measured on site with the new sensors."),
                        ("Risks", "Late ice on the lakes could delay the first samples.")]:
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    prs.save(folder / "Field season.pptx")


def main(out: str) -> None:
    from kbapp.config import load_settings
    from kbapp.gui.main_window import MainWindow
    from kbapp.library import Library

    tmp = Path(tempfile.mkdtemp(prefix="kbapp-shot-"))
    docs = tmp / "My research"
    docs.mkdir()
    for name in ("Oxygen.md", "Warsaw.md", "Black_Death.md", "Apollo_program.md"):
        shutil.copy(CORPUS / name, docs / name)
    article_pdf(CORPUS / "Nikola_Tesla.md", docs / "Nikola Tesla biography.pdf")
    office_files(docs)
    (docs / "scan-corrupted.pdf").write_bytes(b"%PDF-1.4 truncated")
    lib = Library(load_settings(tmp / "library"))
    shots = Path(out).parent
    shots.mkdir(parents=True, exist_ok=True)

    app = QApplication.instance() or QApplication(sys.argv)
    w = MainWindow(lib)
    w.resize(1400, 860)
    w.show()

    def save(name: str) -> None:
        path = shots / name
        if not w.grab().save(str(path)):
            raise SystemExit(f"could not write {path}")
        print(f"saved {path}")

    def first_start():
        if not w.ready or w.documents_shown == 0:
            QTimer.singleShot(300, first_start)
            return
        save("screenshot-first-start.png")
        w.add_paths([str(docs)])
        QTimer.singleShot(200, indexing)

    def indexing():
        if w.index_thread is None or w.progress.value() < 100:
            if w.index_thread is None and w.doc_model.rowCount():
                search()
                return
            QTimer.singleShot(100, indexing)
            return
        w.tabs.setCurrentIndex(1)
        save("screenshot-indexing.png")
        w.tabs.setCurrentIndex(0)
        search()

    def search():
        if not w.ready or w.index_thread is not None:
            QTimer.singleShot(300, search)
            return
        ask("What did Tesla invent with alternating current?", "pdf", "screenshot.png", sheet)

    def ask(query, kind, name, then):
        w.query.setText(query)
        w.run_search()
        QTimer.singleShot(3000, lambda: open_first(kind, name, then))

    def open_first(kind, name, then):
        for i in range(w.results.count()):
            hit = w.results.item(i).data(0x0100)
            if hit.kind == kind:
                w.results.setCurrentRow(i)
                w.open_result(w.results.item(i))
                break
        QTimer.singleShot(1500, lambda: (save(name), then()))

    def sheet():
        ask("how much did the oxygen sensors cost", "xlsx", "screenshot-sheet.png", slide)

    def slide():
        ask("when are the lake water samples taken", "pptx", "screenshot-slide.png", filters)

    def filters():  # PDFs only, and one document's other passages opened under its card
        sp = w.search_pane
        sp.kind_filter.setCurrentIndex(sp.kind_filter.findData("pdf"))
        w.query.setText("Tesla's laboratory in Colorado Springs")
        w.run_search()
        QTimer.singleShot(3000, expand)

    def expand():
        card = w.results.itemWidget(w.results.item(0))
        if card is not None and card.more:
            card.toggle()
        QTimer.singleShot(1000, lambda: (save("screenshot-filters.png"),
                                         w.search_pane.reset_scope(), no_answer()))

    def no_answer():  # a question about something the library never mentions
        ask("In the Rankine cycle, what does water turn into when heated?", "none",
            "screenshot-no-answer.png", documents)

    def documents():
        w.tabs.setCurrentIndex(1)  # the documents tab, to check what a user sees there
        QTimer.singleShot(500, lambda: (save("screenshot-documents.png"), app.quit()))

    QTimer.singleShot(300, first_start)
    app.exec()
    lib.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "docs" / "screenshot.png"))
