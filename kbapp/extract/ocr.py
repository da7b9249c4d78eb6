"""OCR of rendered pages and images with Tesseract (through pytesseract)."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from dataclasses import dataclass

log = logging.getLogger(__name__)

OCR_DPI = 300


class OcrUnavailable(Exception):
    """Tesseract is not installed; scanned pages are marked `needs OCR`."""


class OcrFailed(Exception):
    """OCR of one page failed. `transient`: worth trying again later (a time limit under
    load, a killed child); otherwise a setting must change (a missing language pack)."""

    def __init__(self, message: str, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


# Time allowed for one page grows with its pixels: `base` for a small image, four times
# that for an A4 page at 300 dpi (8.7 MP). Generous by default (Tesseract needs ~1-5 s
# for such a page on an idle core; a busy machine is much slower, and a page that still
# fails is read again later). One knob (KBAPP_OCR_TIMEOUT) scales it all.
BASE_TIMEOUT_S = 60.0
MEGAPIXELS_PER_BASE = 3.0


def page_timeout(pixels: int, base: float = BASE_TIMEOUT_S) -> float:
    return base * (1.0 + pixels / (MEGAPIXELS_PER_BASE * 1e6))


def _explain(exc: Exception, language: str, timeout: float) -> OcrFailed:
    import pytesseract

    if isinstance(exc, pytesseract.TesseractError):
        msg = " ".join(str(exc.message or "").split())
        if "Failed loading language" in msg or "Error opening data file" in msg:
            return OcrFailed(
                f"the OCR language {language!r} is not installed "
                f"(install tesseract-ocr-{language.split('+')[0]} or set KBAPP_OCR_LANGUAGE)",
                transient=False,
            )
        if exc.status is not None and exc.status < 0:
            return OcrFailed(f"Tesseract was stopped by signal {-exc.status}", transient=True)
        return OcrFailed(f"Tesseract failed: {msg or f'exit status {exc.status}'}", True)
    return OcrFailed(f"OCR took longer than {timeout:.0f} s (the machine may be busy)", True)


@dataclass(frozen=True)
class OcrText:
    text: str
    confidence: float | None  # mean word confidence, 0..100
    # (char_from, char_to, x0, y0, x1, y1) per word, in page points (1/72 inch)
    boxes: list[tuple[int, int, float, float, float, float]]


def tesseract_available() -> bool:
    try:
        import pytesseract
    except ImportError:
        return False
    cmd = pytesseract.pytesseract.tesseract_cmd
    return shutil.which(cmd) is not None


def ocr_image(image, scale: float, language: str = "eng",
              timeout: float | None = None) -> OcrText:  # fmt: skip
    """OCR a PIL image; `scale` converts image pixels to page points. `timeout`: the base
    time per page, to which time per megapixel is added. Raises OcrFailed with the true
    reason (time limit, missing language, killed child)."""
    import pytesseract

    if not tesseract_available():
        raise OcrUnavailable("Tesseract is not installed")
    limit = page_timeout(image.width * image.height, BASE_TIMEOUT_S if timeout is None else timeout)
    try:
        data = pytesseract.image_to_data(
            image, lang=language, output_type=pytesseract.Output.DICT, timeout=limit
        )
    except pytesseract.TesseractNotFoundError as exc:
        raise OcrUnavailable(str(exc)) from exc
    except RuntimeError as exc:  # the time limit and TesseractError (a subclass) both
        raise _explain(exc, language, limit) from exc

    out: list[str] = []
    size = 0
    boxes: list[tuple[int, int, float, float, float, float]] = []
    confs: list[float] = []
    last_par: tuple[int, int] | None = None
    for i, word in enumerate(data["text"]):
        word = (word or "").strip()
        conf = float(data["conf"][i])
        if not word or conf < 0:
            continue
        par = (data["block_num"][i], data["par_num"][i])
        if out:
            sep = "\n\n" if par != last_par else " "
            out.append(sep)
            size += len(sep)
        last_par = par
        x, y, w, h = (data[k][i] for k in ("left", "top", "width", "height"))
        boxes.append(
            (size, size + len(word), x * scale, y * scale, (x + w) * scale, (y + h) * scale)
        )
        out.append(word)
        size += len(word)
        confs.append(conf)
    return OcrText("".join(out), sum(confs) / len(confs) if confs else None, boxes)


def private_tempdir() -> str:
    """A folder only this user can read (0700) for Tesseract's page images and text, used
    by this process and removed at exit; folders left by a killed run are removed first."""
    import atexit

    root = tempfile.gettempdir()
    for name in os.listdir(root):
        if name.startswith("kbapp-ocr-"):
            pid = name.split("-")[2]
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    path = tempfile.mkdtemp(prefix=f"kbapp-ocr-{os.getpid()}-", dir=root)
    atexit.register(shutil.rmtree, path, True)
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
