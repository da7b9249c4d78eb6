"""What kbapp makes of real PDFs' passages, per file, as JSON: passages, outline headings
found inside running text, passages of at most two words, passages holding contents/index
dot leaders, passages that start with the end of the previous sentence, and characters of
the canonical text in no passage and no recorded skip.

    .venv/bin/python tools/pdf_passages.py /usr/share/R/doc/manual/R-{intro,data,admin,lang}.pdf
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from kbapp.chunk import chunk_document
from kbapp.extract import extract

_WORDS = re.compile(r"[^\W\d_]{2,}")
_NUMBER_THEN_HEADING = re.compile(r"\n\n[\dA-Z]+(\.\d+)*\s*$")


def passages(path: Path) -> dict:
    ex = extract(path)
    chunks = chunk_document(ex).chunks
    t = ex.text
    inside = 0
    for h in ex.headings:
        if h.end == h.at:
            continue
        starts = h.at == 0 or t[h.at - 2 : h.at] == "\n\n" or _NUMBER_THEN_HEADING.search(
            t[max(0, h.at - 30) : h.at])
        if not (starts and t[h.end : h.end + 2] in ("\n\n", "")):
            inside += 1
    covered = bytearray(len(t))
    spans = [(c.char_from, c.char_to) for c in chunks] + [(h.at, h.end) for h in ex.headings]
    for a, b in spans + [(a, b) for a, b, *_ in ex.skip]:
        covered[a:b] = b"\1" * (b - a)
    return {
        "passages": len(chunks),
        "headings_inside_text": inside,
        "at_most_two_words": sum(1 for c in chunks if len(_WORDS.findall(c.content)) <= 2),
        "dot_leader_passages": sum(1 for c in chunks if re.search(r"(?:\. ){6,}\S*\d", c.content)),
        "starts_with_end_of_sentence": sum(
            1 for c in chunks if re.match(r"[.!?](?:\s|$)(?!\.)", c.content)),
        "characters_lost": sum(1 for i, ch in enumerate(t) if not covered[i] and not ch.isspace()),
    }  # fmt: skip


if __name__ == "__main__":
    print(json.dumps({Path(p).name: passages(Path(p)) for p in sys.argv[1:]}, indent=1))
