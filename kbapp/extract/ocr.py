"""OCR of rendered pages and images with Tesseract (through pytesseract)."""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass

log = logging.getLogger(__name__)

OCR_DPI = 300


class OcrUnavailable(Exception):
    """Tesseract is not installed; scanned pages are marked `needs OCR`."""


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


def ocr_image(image, scale: float, language: str = "eng", timeout: float = 120.0) -> OcrText:
    """OCR a PIL image; `scale` converts image pixels to page points."""
    import pytesseract

    if not tesseract_available():
        raise OcrUnavailable("Tesseract is not installed")
    try:
        data = pytesseract.image_to_data(
            image, lang=language, output_type=pytesseract.Output.DICT, timeout=timeout
        )
    except RuntimeError as exc:  # pytesseract signals its timeout this way
        raise TimeoutError(f"OCR took longer than {timeout:.0f} s") from exc
    except pytesseract.TesseractNotFoundError as exc:
        raise OcrUnavailable(str(exc)) from exc

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
