"""Embed: load an encoder (bundled default, verified), count tokens, encode normalised.

A model id is the model's name, and for the ONNX backends its backend after "@":
`bundled:all-MiniLM-L6-v2@onnx-int8`. The id is the library's model stamp, so vectors of
two backends are never mixed (a backend change is a model change). Backends:
- `torch`: sentence-transformers, fp32 (the reference; no suffix in the id);
- `onnx-fp32`, `onnx-int8`: the same model through ONNX Runtime (embed/onnx.py).
"""

from __future__ import annotations

import threading
from pathlib import Path

from ..config import BUNDLED_MODEL
from ..errors import ModelError
from .common import BUNDLED_SHA256, Encoder, bundled_model_dir, check_normalised, verify_bundled

BACKENDS = ("torch", "onnx-fp32", "onnx-int8")
# Chosen by measurement (docs/EVALUATION.md): int8 is about twice as fast as torch fp32
# with no significant retrieval loss on the sets we measured.
DEFAULT_BACKEND = "onnx-int8"

__all__ = [
    "BACKENDS", "BUNDLED_SHA256", "DEFAULT_BACKEND", "Encoder", "bundled_model_dir",
    "check_normalised", "load_encoder", "model_id", "split_model", "verify_bundled",
]  # fmt: skip


def split_model(model: str) -> tuple[str, str]:
    """(model name, backend) of a model id."""
    base, sep, backend = model.rpartition("@")
    if sep and backend in BACKENDS:
        return base, backend
    return model, "torch"


def model_id(name: str, backend: str) -> str:
    if backend not in BACKENDS:
        raise ModelError(f"unknown encoder backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    return name if backend == "torch" else f"{name}@{backend}"


def _source(name: str) -> tuple[Path | None, str]:
    """The model folder (None for a name only the Hugging Face cache knows) and the
    location sentence-transformers is given."""
    if name == BUNDLED_MODEL:
        source = bundled_model_dir()
        verify_bundled(source)
        return source, str(source)
    p = Path(name).expanduser()
    return (p, str(p)) if p.is_dir() else (None, name)


_cache: dict[str, Encoder] = {}
_lock = threading.Lock()


def load_encoder(model: str | None = None) -> Encoder:
    """One loaded encoder per model id per process: loading is the slowest thing kbapp does.
    None: the bundled model with the default backend."""
    model = model or model_id(BUNDLED_MODEL, DEFAULT_BACKEND)
    with _lock:
        enc = _cache.get(model)
    if enc is not None:
        return enc
    name, backend = split_model(model)
    source, location = _source(name)
    if backend == "torch":
        from .sentence import SentenceEncoder

        enc = SentenceEncoder(model, location)
    else:
        if source is None:
            raise ModelError(f"no model folder at {name}: the {backend} backend needs a local folder "
                             "with the model's files; kbapp never downloads at run time")
        from .onnx import OnnxEncoder

        enc = OnnxEncoder(model, source, backend)
    with _lock:
        return _cache.setdefault(model, enc)
