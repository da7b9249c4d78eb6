"""One folder with every kind of hostile entry kbapp has met, indexed through the real CLI:
how long it takes, that every good file is searchable, that every bad one failed (or was
skipped) with a reason, that nothing outside the folder was read and that no traceback was
printed. Prints JSON.

    .venv/bin/python tools/hostile_folder.py [WORK_DIR]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

GOOD_NOTE = "# Boats\n\nThe ferry to the island leaves at seven every morning.\n"


def build(d: Path) -> None:
    import pymupdf

    d.mkdir(parents=True)
    (d / "good-notes.md").write_text(GOOD_NOTE)
    with open(os.path.join(os.fsencode(d), b"caf\xe9-menu.md"), "wb") as fh:
        fh.write(b"The cafe serves cardamom buns on Fridays.")
    (d / "two\nlines.md").write_text("Lanterns are lit at dusk along the quay.")
    (d / "heading-bomb.md").write_text("# a" + " " * 20000 + "x\n\nBody text.")
    (d / "dots.txt").write_text("." * 300_000)
    (d / "one-line.md").write_text("word " * 400_000)
    (d / "zero.pdf").write_bytes(b"")
    (d / "garbage.pdf").write_bytes(os.urandom(4096))
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Truncated manual page about rivets.")
    data = doc.tobytes()
    (d / "truncated.pdf").write_bytes(data[: len(data) * 6 // 10])
    (d / "binary.md").write_bytes(bytes(range(256)) * 40)
    with zipfile.ZipFile(d / "bomb.xlsx", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/worksheets/sheet1.xml", "0" * (300 * 2**20))
    (d / "not-an-image.png").write_bytes(b"this is text, not a picture")
    (d / "utf7.eml").write_bytes(
        b'From: a@example.com\nContent-Type: text/plain; charset="UTF-7"\n\n'
        b"Signed.\niQIzBAEBCgAdFiEECPbAhaBWEfiXj/kxdRlcPb+1fkUFAlx5WHkACgkQdRlcPb+1\n"
    )
    (d / "shadow-link.txt").symlink_to("/etc/passwd")
    (d / "dangling.txt").symlink_to(d / "nowhere")
    (d / "loop").symlink_to(d, target_is_directory=True)
    locked = d / "locked"
    locked.mkdir()
    (locked / "secret.md").write_text("unreachable")
    locked.chmod(0)


def main() -> None:
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="kbhostile-"))
    folder, lib = work / "hostile", work / "lib"
    build(folder)

    def kb(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "kbapp", "--library", str(lib), *args],
                              capture_output=True, text=True, timeout=3600)  # fmt: skip

    started = time.monotonic()
    index = kb("index", str(folder))
    seconds = time.monotonic() - started
    status = json.loads(kb("status", "--json").stdout)
    found = json.loads(kb("search", "when does the ferry to the island leave", "--json").stdout)
    cafe = json.loads(kb("search", "cardamom buns", "--json", "--mode", "bm25").stdout)
    passwd = json.loads(kb("search", "root:x:0:0", "--json", "--mode", "bm25").stdout)
    (folder / "locked").chmod(0o700)
    states: dict[str, int] = {}
    for d in status["documents"]:
        states[d["state"]] = states.get(d["state"], 0) + 1
    print(json.dumps({
        "entries": len(os.listdir(folder)),
        "index_seconds": round(seconds, 1),
        "index_exit": index.returncode,
        "traceback": "Traceback" in index.stderr,
        "states": states,
        "without_reason": [d["name"] for d in status["documents"]
                           if d["state"] in ("failed", "skipped", "unsupported") and not d["reason"]],
        "good_found": bool(found["results"]) and found["results"][0]["document_name"] == "good-notes.md",
        "bad_utf8_name_found": any("cardamom" in r["content"] for r in cafe["results"]),
        "outside_indexed": any("/etc/" in r["document"] for r in passwd.get("results", [])),
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
