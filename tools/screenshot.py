"""The README screenshots, from a real window under Xvfb: the first start, indexing in
progress, a PDF result, a spreadsheet and a slide citation, a figure in a PDF table, a search narrowed to PDFs with
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


# Ohio's public capital stock, millions of 1982 dollars (Munnell 1990, R's Ecdat "Produc"):
# year, highways and streets, water and sewer facilities, other public buildings, total
OHIO = [
    (1970, 23653.2, 8042.9, 16621.6, 48317.7),
    (1971, 24331.8, 8185.7, 17723.5, 50241.1),
    (1972, 24733.6, 8222.2, 18440.0, 51395.8),
    (1973, 24882.9, 8181.2, 19292.2, 52356.4),
    (1974, 24967.2, 8073.3, 19794.2, 52834.8),
    (1975, 25063.6, 8154.5, 20246.6, 53464.7),
    (1976, 24980.4, 8182.6, 21025.0, 54188.1),
    (1977, 24924.3, 8163.7, 21881.5, 54969.5),
    (1978, 24781.5, 8188.1, 22421.6, 55391.1),
    (1979, 24696.3, 8735.8, 22683.1, 56115.2),
    (1980, 24562.7, 9221.0, 22729.9, 56513.6),
    (1981, 24343.5, 9746.7, 22890.0, 56980.2),
    (1982, 24029.6, 10083.6, 22987.8, 57101.0),
    (1983, 23773.5, 10340.5, 22815.0, 56929.0),
    (1984, 23606.4, 10301.2, 22740.9, 56648.5),
    (1985, 23826.1, 10347.1, 22290.0, 56463.3),
    (1986, 23755.8, 10438.2, 22089.1, 56283.1),
]


def table_pdf(out: Path) -> None:
    """A statistics page as such reports print it: column headers once at the top."""
    heads = ["Highways and streets", "Water and sewer facilities", "Other public buildings",
             "Total public capital"]
    rows = "".join("<tr><td>" + "</td><td>".join([str(y)] + [f"{v:,.1f}" for v in vals])
                   + "</td></tr>" for y, *vals in OHIO)
    html = ("<h1>Ohio: public capital, 1970-1986</h1><h2>Table 1. Public capital stock "
            "(millions of 1982 dollars)</h2><table><tr><th>Year</th>"
            + "".join(f"<th>{h}</th>" for h in heads) + f"</tr>{rows}</table>")
    css = "body {font-family: serif; font-size: 10pt;} td, th {padding: 1px 0 1px 16px;}"
    writer = pymupdf.DocumentWriter(str(out))
    story = pymupdf.Story(html=html, user_css=css)
    device = writer.begin_page(pymupdf.paper_rect("a4"))
    story.place(pymupdf.paper_rect("a4") + (54, 54, -54, -54))
    story.draw(device)
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
    table_pdf(docs / "Ohio public capital.pdf")
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
        ask("when are the lake water samples taken", "pptx", "screenshot-slide.png", table)

    def table():  # a figure in a PDF table: the card names its row and column
        ask("Ohio water and sewer facilities capital in 1983", "pdf", "screenshot-table.png",
            filters)

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
