"""How long the window's event loop is held up while it adds a folder (and indexes it),
opens a result in a very large text document, and removes the folder. A benchmark, not a
test: it prints JSON with the longest gap between 10 ms heartbeats in each phase.

    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/gui_stall.py [--mb 45]
    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/gui_stall.py --real --folder DIR

The big document is Markdown of --mb megabytes (under the 50 MB text limit). Embedding uses
a hashed bag-of-words encoder: the figure is about the GUI thread, not about retrieval, and
the real model would take an hour over 45 MB. `--real --folder DIR`: the default encoder
(int8) indexing a real folder of many documents beside the big one, so every extraction
worker and the embedder are busy at once, as on a user's first day.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QApplication


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=45.0)
    ap.add_argument("--folder", type=Path, help="a real folder indexed beside the big document")
    ap.add_argument("--real", action="store_true", help="the default encoder, not the hashed one")
    a = ap.parse_args()

    from kbapp.config import load_settings
    from kbapp.embed.hashed import HashedEncoder
    from kbapp.gui.app import leave
    from kbapp.gui.main_window import MainWindow
    from kbapp.library import Library

    tmp = Path(tempfile.mkdtemp(prefix="kbapp-stall-"))
    docs = tmp / "docs"
    docs.mkdir()
    para = ("The harbour master logs every ferry that docks at the north pier, with its "
            "tonnage, its crew and the hour it leaves again. ")  # fmt: skip
    n = int(a.mb * 2**20 / (len(para) * 3 + 14))
    with open(docs / "big.md", "w") as fh:
        fh.write("# Harbour log\n\n")
        for i in range(n):
            fh.write(f"{para * 3} Entry {i}.\n\n")
    (docs / "needle.md").write_text("# Lighthouse\n\nThe lighthouse lamp is cleaned every Tuesday.\n")
    if a.folder:
        for f in sorted(a.folder.rglob("*")):
            if f.is_file():
                shutil.copy2(f, docs / "_".join(f.relative_to(a.folder).parts))
    lib = Library(load_settings(tmp / "library"), None if a.real else HashedEncoder())
    app = QApplication.instance() or QApplication(sys.argv)
    w = MainWindow(lib)
    w.resize(1300, 800)
    w.show()

    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]
    phase = ["start"]
    worst: dict[str, float] = {}
    took: dict[str, float] = {}

    def beat() -> None:
        now = clock.elapsed()
        worst[phase[0]] = max(worst.get(phase[0], 0), now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(beat)
    timer.start(10)
    began = [time.monotonic()]

    def enter(name: str) -> None:
        took[phase[0]] = round(time.monotonic() - began[0], 2)
        phase[0], began[0] = name, time.monotonic()

    def step_add() -> None:
        if not w.ready:
            QTimer.singleShot(100, step_add)
            return
        enter("add folder and index")
        w.add_paths([str(docs)])
        QTimer.singleShot(500, wait_indexed)

    def wait_indexed() -> None:
        if w.index_thread is not None or w.pending_index:
            QTimer.singleShot(200, wait_indexed)
            return
        enter("search and open a result in the big document")
        w.query.setText("ferry tonnage north pier")
        w.search_opts = w.search_opts.with_overrides(mode="bm25")
        w.run_search()
        QTimer.singleShot(200, open_big)

    def open_big() -> None:
        items = [w.results.item(i) for i in range(w.results.count())]
        big = [it for it in items if it.data(0x0100).name == "big.md"]
        if not big:
            QTimer.singleShot(200, open_big)
            return
        w.open_result(big[0])
        QTimer.singleShot(200, wait_open)

    def wait_open() -> None:
        if w.viewer.current is None or w.engine.busy:
            QTimer.singleShot(100, wait_open)
            return
        took["chunks"] = sum(d.chunks or 0 for d in w.doc_model.docs)
        enter("remove folder")
        w.folder_list.setCurrentRow(0)
        w.remove_folder(confirm=False)
        QTimer.singleShot(200, wait_removed)

    def wait_removed() -> None:
        if w.engine.busy or w.folder_list.count():
            QTimer.singleShot(100, wait_removed)
            return
        enter("done")
        timer.stop()
        chunks = took.pop("chunks")
        print(json.dumps({
            "big_document_mb": round((docs / "big.md").stat().st_size / 2**20, 1),
            "documents": len(list(docs.iterdir())), "encoder": lib.model,
            "chunks_indexed": chunks,
            "longest_gui_stall_ms": {k: v for k, v in worst.items() if k != "done"},
            "phase_seconds": {k: v for k, v in took.items() if k != "start"},
        }, indent=1))  # fmt: skip
        app.quit()

    QTimer.singleShot(100, step_add)
    app.exec()
    w.close()
    lib.close()
    leave(0)  # as the app ends: without the final collection that a C extension breaks


if __name__ == "__main__":
    main()
