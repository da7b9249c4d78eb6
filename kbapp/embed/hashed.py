"""A deterministic bag-of-hashed-words encoder: instant, unit length, no model. For the
plumbing tests and the GUI benchmark only, never for a retrieval claim (it knows no
meaning, only shared words)."""

from __future__ import annotations

import hashlib

import numpy as np

from ..words import fold, words


def _words(text: str) -> int:
    return len(fold(text).split()) + 2


class HashedEncoder:
    name = "fake-hash-64"
    dims = 64
    window = 256

    def count_tokens(self, text: str) -> int:
        return _words(text)

    token_counter = staticmethod(_words)  # a module function: it pickles for the workers

    def encode(self, texts, batch_size: int = 32) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in words(text):
                h = int(hashlib.md5(word.encode()).hexdigest()[:8], 16)
                out[row, h % self.dims] += 1.0
            out[row, 0] += 1e-3
        return out / np.linalg.norm(out, axis=1, keepdims=True)
