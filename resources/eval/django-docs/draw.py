"""Draw the candidate answer sentences the questions were written from, before any search:
a random page of the whole library (every page equally likely), then one random prose
sentence of 60-260 characters on it.

    .venv/bin/python resources/eval/django-docs/draw.py CORPUS_DIR [COUNT]
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pymupdf

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def main() -> None:
    corpus = Path(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 80
    pages = []
    for pdf in sorted(corpus.glob("*.pdf")):
        with pymupdf.open(pdf) as doc:
            pages += [(pdf.stem, n) for n in range(1, doc.page_count + 1)]
    rng = random.Random(20261207)
    for stem, n in rng.sample(pages, count):
        with pymupdf.open(corpus / f"{stem}.pdf") as doc:
            text = " ".join(doc[n - 1].get_text().split())
        prose = [s for s in SENTENCE.split(text) if 60 <= len(s) <= 260
                 and sum(c in "()[]{}=_<>/'\"" for c in s) < 6 and s[-1] in ".!?"]
        print(f"{stem}\t{n}\t{rng.choice(prose) if prose else '-'}")


if __name__ == "__main__":
    main()
