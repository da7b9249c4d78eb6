"""Start-up in order: excepthook, log file, library, then the window (model loads later)."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import traceback
from typing import NoReturn

from .. import __version__
from ..logs import log_to_file


def _icon_path() -> str | None:
    """resources/kbapp.png beside the source tree, or inside a PyInstaller bundle."""
    from pathlib import Path

    roots = [Path(getattr(sys, "_MEIPASS", "")), Path(__file__).resolve().parents[2]]
    for root in roots:
        p = root / "resources" / "kbapp.png"
        if p.exists():
            return str(p)
    return None


def error_box(report: str, log_path: str):
    """The dialog for an uncaught error: what happened, where the log is, and the full
    report as selectable details, so it can be copied into a bug report."""
    from PySide6.QtWidgets import QMessageBox

    box = QMessageBox(QMessageBox.Critical, "kbapp — unexpected error",
                      f"Something went wrong. The log is at {log_path}.")  # fmt: skip
    box.setDetailedText(report)
    return box


def make_excepthook(log_path: str, show=lambda box: box.exec()):
    def excepthook(kind, value, tb) -> None:
        report = "".join(traceback.format_exception(kind, value, tb))
        logging.getLogger("kbapp").error("uncaught exception\n%s", report)
        show(error_box(report, log_path))

    return excepthook


def leave(code: int) -> NoReturn:
    """End the window's process without the interpreter's final garbage collection. After a
    session that indexed several PDFs, that collection aborts the process ("bool_dealloc:
    deallocating True or False", a reference-count error inside a C extension; reproduced by
    tools/gui_stall.py --folder with four PDFs, not yet traced to its library). By now the
    library is closed and everything is saved, so nothing is lost by skipping it (the
    caller syncs the window's QSettings first: Qt would otherwise write them on destruction)."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def run_app(library: str | None = None, model: str | None = None,
            backend: str | None = None) -> int:  # fmt: skip
    from PySide6.QtWidgets import QApplication, QMessageBox

    from ..errors import KbError
    from ..library import Library
    from .main_window import MainWindow

    log_path = log_to_file() or "(the log folder cannot be written)"
    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("kbapp")
    icon = _icon_path()
    if icon:
        from PySide6.QtGui import QIcon

        app.setWindowIcon(QIcon(icon))

    sys.excepthook = make_excepthook(log_path)
    try:
        lib = Library.open(library, model=model, **({"backend": backend} if backend else {}))
        logging.getLogger("kbapp").info(
            "kbapp %s: library %s, model %s", __version__, lib.root, lib.model
        )
    except KbError as exc:
        QMessageBox.critical(None, "kbapp", str(exc))
        return 1
    window = MainWindow(lib)
    window.show()
    code = app.exec()
    if window.isVisible():  # the loop ended without the window closing: end its threads
        window.close()
    lib.close()
    window.settings.sync()
    leave(code)
