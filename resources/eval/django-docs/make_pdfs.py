"""Lay out one release of Django's documentation (its Sphinx HTML build) as paginated A4
PDFs with PyMuPDF's Story: one PDF per page of the reference, topic guides and how-tos,
titled "Django X.Y documentation: <page title>". Three releases side by side make a large
library of look-alike documents: the same pages, nearly the same words, and a question that
names its release has to find the right document and page.

    .venv/bin/python resources/eval/django-docs/make_pdfs.py HTML_DIR RELEASE OUT_DIR
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from story_pdf import write_pdf  # noqa: E402

MAIN = re.compile(r'<div class="yui-g" id="[^"]*">(.*?)<div class="yui-b" id="sidebar">', re.S)
TITLE = re.compile(r"<title>(.*?) &#8212;", re.S)
DROP = re.compile(r'<a class="headerlink"[^>]*>.*?</a>|<script.*?</script>|<img[^>]*>', re.S)
SECTIONS = ("ref", "topics", "howto")


def main() -> None:
    src, release, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    pages = 0
    for page in sorted(p for s in SECTIONS for p in (src / s).rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        m, t = MAIN.search(text), TITLE.search(text)
        if not m or not t:
            raise SystemExit(f"{page}: no main body or title")
        stem = "-".join(page.relative_to(src).with_suffix("").parts)
        target = out / f"django-{release}-{stem}.pdf"
        title = f"Django {release} documentation: {html.unescape(t.group(1))}"
        pages += write_pdf(DROP.sub("", m.group(1)), target, title)
    print(release, pages, "pages")


if __name__ == "__main__":
    main()
