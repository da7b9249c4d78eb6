"""One logging set-up for the window and the CLI: everything (kbapp's own records and the
libraries' notes: ONNX Runtime's quantizer, transformers) goes to the log file; the
console shows kbapp's own warnings as one plain line each, and the rest only with -v."""

from __future__ import annotations

import logging
import logging.handlers
import sys

from .config import log_dir

FILE_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _OwnOrSerious(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.name.startswith("kbapp") or record.levelno >= logging.ERROR


def log_to_file() -> str | None:
    """Add the rotating log file to the root logger (INFO and up); its path, or None when
    the folder cannot be written (logging never stops the app)."""
    root = logging.getLogger()
    try:
        folder = log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "kbapp.log"
        for h in root.handlers:  # once per process, whoever asks first
            if isinstance(h, logging.FileHandler) and h.baseFilename == str(path.resolve()):
                return str(path)
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=3)
    except OSError:
        return None
    handler.setFormatter(logging.Formatter(FILE_FORMAT))
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return str(path)


def log_to_console(verbose: bool) -> None:
    """stderr: with -v every INFO record, named; otherwise kbapp's warnings, plainly."""
    handler = logging.StreamHandler(sys.stderr)
    if verbose:
        handler.setLevel(logging.INFO)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    else:
        handler.setLevel(logging.WARNING)
        handler.setFormatter(logging.Formatter("kbapp: %(message)s"))
        handler.addFilter(_OwnOrSerious())
    root = logging.getLogger()
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.INFO:
        root.setLevel(logging.INFO)
