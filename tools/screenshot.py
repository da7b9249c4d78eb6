"""Make the README screenshot: a real window under Xvfb with results and an open PDF page.

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
    (docs / "scan-corrupted.pdf").write_bytes(b"%PDF-1.4 truncated")
    lib = Library(load_settings(tmp / "library"))
    lib.index([docs])

    app = QApplication.instance() or QApplication(sys.argv)
    w = MainWindow(lib)
    w.resize(1400, 860)
    w.show()

    def search():
        if not w.ready or w.index_thread is not None:
            QTimer.singleShot(300, search)
            return
        w.query.setText("What did Tesla invent with alternating current?")
        w.run_search()
        QTimer.singleShot(3000, open_first)

    def open_first():
        for i in range(w.results.count()):
            hit = w.results.item(i).data(0x0100)
            if hit.page_from:
                w.results.setCurrentRow(i)
                w.open_result(w.results.item(i))
                break
        QTimer.singleShot(800, grab)

    def grab():
        w.grab().save(out)
        print(f"saved {out}")
        w.tabs.setCurrentIndex(1)  # and the documents tab, to check what a user sees there
        QTimer.singleShot(500, grab_documents)

    def grab_documents():
        second = str(Path(out).with_name(Path(out).stem + "-documents.png"))
        w.grab().save(second)
        print(f"saved {second}")
        app.quit()

    QTimer.singleShot(500, search)
    app.exec()
    lib.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "docs" / "screenshot.png"))
