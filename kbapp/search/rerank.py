"""Optional cross-encoder rerank of the top candidates. Off by default: measured, not
assumed (seed 000 saw it help, seed 001 saw it hurt; docs/EVALUATION.md has ours)."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

from ..errors import ModelError

_cache: dict[str, object] = {}
_lock = threading.Lock()


def load_cross_encoder(name: str):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with _lock:
        model = _cache.get(name)
        if model is None:
            try:
                from sentence_transformers import CrossEncoder
            except ImportError:
                raise ModelError(
                    "the cross-encoder reranker needs the torch extra, which is not "
                    "installed: pip install -c constraints.txt 'kbapp[torch]'"
                ) from None
            try:
                model = CrossEncoder(name, device="cpu")
            except Exception as exc:  # noqa: BLE001
                raise ModelError(
                    f"cannot load cross-encoder {name!r}: {exc}. Give a local folder or a "
                    "model already in the Hugging Face cache"
                ) from exc
            _cache[name] = model
    return model


def rerank_scores(model_name: str, query: str, passages: Sequence[str]) -> list[float]:
    if not passages:
        return []
    model = load_cross_encoder(model_name)
    scores = model.predict([(query, p) for p in passages], show_progress_bar=False)
    return [float(s) for s in scores]
