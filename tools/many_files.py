"""Index a folder of N tiny files (default 50,000) with the fake encoder and print timings:
the scan/extract/store path at scale, without hours of embedding.

    .venv/bin/python tools/many_files.py 50000
"""

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from conftest import FakeEncoder, make_library  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 50000
tmp = Path(tempfile.mkdtemp())
docs = tmp / "many"
docs.mkdir()
for i in range(n):
    (docs / f"f{i:06d}.txt").write_text(f"tiny file number {i} about item {i % 97}")
lib = make_library(tmp / "lib", FakeEncoder())
t = time.perf_counter()
p = lib.index([docs])
first = time.perf_counter() - t
t = time.perf_counter()
again = lib.index([docs])
second = time.perf_counter() - t
print(json.dumps({"files": n, "indexed": p.indexed, "first_run_s": round(first, 1),
                  "files_per_s": round(n / first), "rescan_unchanged_s": round(second, 1),
                  "unchanged": again.unchanged}))  # fmt: skip
