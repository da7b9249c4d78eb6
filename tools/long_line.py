"""Chunking time of a 5 MB one-line Markdown file (issue #12, item 4): extraction and
chunking with the real tokenizer, no embedding.

.venv/bin/python tools/long_line.py
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from kbapp.chunk import chunk_document
from kbapp.config import ChunkOptions
from kbapp.embed import load_encoder
from kbapp.extract import extract

WORDS = ["the", "pump", "valve", "manual", "harbour", "ship", "river", "tide", "sail", "rope", "keel"]


def main() -> None:
    rng = random.Random(0)
    path = Path(tempfile.mkdtemp()) / "oneline5mb.md"
    path.write_text(" ".join(rng.choice(WORDS) for _ in range(900_000))[:5_000_000])
    enc = load_encoder()
    t = time.perf_counter()
    ex = extract(path)
    extract_s = time.perf_counter() - t
    t = time.perf_counter()
    chunked = chunk_document(ex, ChunkOptions(), enc.count_tokens, enc.window)
    chunk_s = time.perf_counter() - t
    print(f"extract {extract_s:.2f} s, chunk {chunk_s:.2f} s, {len(chunked.chunks)} chunks, "
          f"split_for_window {chunked.split_for_window}")  # fmt: skip


if __name__ == "__main__":
    main()
