"""Lay out Python's "What's New in Python X.Y" pages (Debian's python3.11-doc, HTML) as
paginated A4 PDFs with PyMuPDF's Story, one per release: twenty look-alike documents of the
same shape (new features, improved modules, deprecations, porting notes), so a question
that names its release has to find the right document and page.

    .venv/bin/python resources/eval/python-whatsnew/make_pdfs.py HTML_DIR OUT_DIR
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from story_pdf import write_pdf  # noqa: E402

MAIN = re.compile(r'<div class="body" role="main">(.*?)<div class="sphinxsidebar"', re.S)
DROP = re.compile(r'<a class="headerlink"[^>]*>.*?</a>|<script.*?</script>|<img[^>]*>', re.S)


def release(path: Path) -> tuple[int, int]:
    major, minor = path.stem.split(".")
    return int(major), int(minor)


def main() -> None:
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for page in sorted(src.glob("[23].*.html"), key=release):
        m = MAIN.search(page.read_text(encoding="utf-8"))
        if not m:
            raise SystemExit(f"{page}: no main body")
        target = out / f"whatsnew-{page.stem}.pdf"
        pages = write_pdf(DROP.sub("", m.group(1)), target, f"What's New In Python {page.stem}")
        print(target.name, pages, "pages")


if __name__ == "__main__":
    main()
