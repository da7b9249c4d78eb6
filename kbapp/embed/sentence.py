"""The reference backend: sentence-transformers (torch, fp32) on the CPU."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import ModelError
from ..words import fold
from .common import WordPieces, check_normalised, lock


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

    def __init__(self, name: str, location: str) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        _quiet_transformers()
        self.name = name
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ModelError(
                "the torch backend needs the torch extra, which is not installed: "
                "pip install -c constraints.txt 'kbapp[torch]' (the default backend, "
                "onnx-int8, needs none of it)"
            ) from None
        try:
            with lock:
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
        # The fast tokenizer (Rust) refuses a second thread while one uses it ("Already
        # borrowed"): indexing and a search from the window encode at the same time.
        self._use = threading.Lock()
        vocab = Path(location) / "tokenizer.json"  # a local folder with a fast tokenizer
        self.token_counter = WordPieces(vocab) if vocab.is_file() else None

    def count_tokens(self, text: str) -> int:
        """Word-pieces including [CLS]/[SEP], i.e. what the window limit counts."""
        if self.token_counter is not None:
            return self.token_counter(text)
        with self._use:
            ids = self._tokenizer(fold(text), add_special_tokens=True, truncation=False)
        return len(ids["input_ids"])

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        with self._use:
            vecs = self._model.encode(
                [fold(t) for t in texts],
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ).astype(np.float32, copy=False)
        check_normalised(vecs)
        return vecs


