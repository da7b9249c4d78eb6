"""The same sentence-transformers model through ONNX Runtime: fp32, or int8 weights.

The ONNX files are made on this machine from the local model, once, into the user's cache
folder, next to a stamp with the source weights' and the file's sha256; a file whose hash
does not match is made again. A BERT model in a safetensors file (the bundled one) is
written straight into the fused graph (embed/graph.py: no torch); another model is exported
through torch (the `torch` extra) and fused by ONNX Runtime's transformer optimizer. Then
dynamic quantization with per-channel int8 weights. Neither making nor loading the default
encoder needs torch, transformers or sentence-transformers.
Pooling (mean or CLS) and normalisation follow the model's own sentence-transformers
configuration; the tokenizer is the model's tokenizer.json (the `tokenizers` library).
docs/EVALUATION.md has the measurement behind the default.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import threading
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import platformdirs

from ..errors import ModelError
from ..paths import file_sha256
from ..words import fold
from . import graph
from .common import WordPieces, check_normalised

log = logging.getLogger(__name__)

QUANTIZED = "onnx-int8"
PLAIN = "onnx-fp32"
FORMAT = "2"  # bump when the export or quantization recipe changes
# Writing the graph and int8 quantization of all-MiniLM-L6-v2 (90.9 MB of weights) took
# 2.9 s on the 2-core development machine (the torch export and fusion: 10.4 s, while it
# indexed): what the first run announces.
PREPARE_S_PER_MB = 0.035


def _weights(source: Path) -> Path:
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (source / name).exists():
            return source / name
    raise ModelError(f"no model weights (model.safetensors) in {source}")


def cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("kbapp", appauthor=False)) / "onnx"


def _export(source: Path, out: Path) -> None:
    """The fused fp32 graph of the transformer (token vectors out); pooling stays ours."""
    try:
        graph.build(source, out)
        return
    except graph.Unsupported as exc:
        why = str(exc)
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        raise ModelError(
            f"this model is not a plain BERT encoder in a safetensors file ({why}); making its "
            "ONNX file needs the torch extra: pip install -c constraints.txt 'kbapp[torch]'"
        ) from None
    log.info("exporting through torch: %s", why)
    _torch_export(source, out)
    _fuse(source, out)


def _torch_export(source: Path, out: Path) -> None:
    """torch.onnx export of the transformer (token embeddings out)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    # The plain ("eager") attention exports as the MatMul/Softmax pattern that ONNX
    # Runtime's optimizer fuses; the default (scaled_dot_product_attention) does not fuse.
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Loading weights" is no news for a user
    model = AutoModel.from_pretrained(str(source), local_files_only=True,
                                      attn_implementation="eager").eval()  # fmt: skip
    tok = AutoTokenizer.from_pretrained(str(source), local_files_only=True)
    sample = tok(["kbapp exports this model", "once"], return_tensors="pt", padding=True)
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class Hidden(torch.nn.Module):
        def __init__(self, m) -> None:
            super().__init__()
            self.m = m

        def forward(self, *args):
            return self.m(**dict(zip(names, args, strict=True))).last_hidden_state

    axes = {n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]}
    # The tracer's notes (constant shapes in mask code) are about causal models; for an
    # encoder the exported graph was checked against torch (tests/test_model.py).
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Hidden(model), tuple(sample[n] for n in names), str(out),
                          input_names=names, output_names=["hidden"], dynamic_axes=axes,
                          opset_version=17, dynamo=False)  # fmt: skip


# Architectures ONNX Runtime's transformer optimizer knows (model_type in config.json).
_FUSABLE = {"bert": "bert", "roberta": "bert", "xlm-roberta": "bert", "mpnet": "bert",
            "distilbert": "bert", "electra": "bert"}  # fmt: skip


def _fuse(source: Path, path: Path) -> None:
    """Fuse attention, layer norms and GELU in place where the optimizer knows the model.
    Measured on 1,200 squad-public passages, two threads: int8 62.4 -> 73.0 passages/s,
    fp32 45.7 -> 50.6; vectors unchanged (cosine to the unfused file's >= 0.9999)."""
    cfg = _read_json(source / "config.json")
    kind = _FUSABLE.get(str(cfg.get("model_type", "")))
    if kind is None:
        return
    from onnxruntime.transformers import optimizer

    try:
        model = optimizer.optimize_model(str(path), model_type=kind,
                                         num_heads=int(cfg.get("num_attention_heads", 0)),
                                         hidden_size=int(cfg.get("hidden_size", 0)))  # fmt: skip
        model.save_model_to_file(str(path))
    except Exception as exc:  # noqa: BLE001 - a speed-up only: the plain graph still works
        log.warning("the %s model runs unfused (the optimizer failed: %s)", kind, exc)


def onnx_file(source: Path, backend: str) -> Path:
    """The cached ONNX file for this model and backend, made first when missing."""
    weights = _weights(source)
    src_sha = file_sha256(weights)
    folder = cache_dir() / src_sha[:24]
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = folder / f"{backend}-v{FORMAT}.onnx"
    stamp_path = target.with_suffix(".json")
    with open(folder / "lock", "a+") as lock:  # two processes never export at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        with contextlib.suppress(OSError, ValueError):
            stamp = json.loads(stamp_path.read_text())
            if stamp.get("source_sha256") == src_sha and stamp.get("sha256") == file_sha256(target):
                return target
        # The one line a user sees; the libraries' own notes go to the log file only.
        log.warning("preparing the model for this computer, once: about %.0f s",
                    max(5.0, weights.stat().st_size / 1e6 * PREPARE_S_PER_MB))  # fmt: skip
        started = time.monotonic()
        fp32 = folder / f"{PLAIN}-v{FORMAT}.onnx"
        tmp = folder / f"tmp-{os.getpid()}.onnx"
        try:
            if backend == PLAIN or not fp32.exists():
                _export(source, tmp)
                os.replace(tmp, fp32)
            if backend == QUANTIZED:
                from onnx import TensorProto
                from onnxruntime.quantization import QuantType, quantize_dynamic

                # The fused operators come from ONNX Runtime's own domain, which shape
                # inference does not type: their outputs are float, as the model's are.
                quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8,
                                 per_channel=True,
                                 extra_options={"DefaultTensorType": TensorProto.FLOAT})  # fmt: skip
                os.replace(tmp, target)
        except Exception as exc:  # noqa: BLE001 - any failure here means the same to a user
            raise ModelError(f"cannot make the {backend} encoder from {source}: {exc}") from exc
        finally:
            tmp.unlink(missing_ok=True)
        log.info("the %s encoder for %s was made in %.1f s", backend, source,
                 time.monotonic() - started)  # fmt: skip
        stamp_path.write_text(json.dumps({
            "source": str(weights), "source_sha256": src_sha, "backend": backend,
            "format": FORMAT, "sha256": file_sha256(target),
        }))  # fmt: skip
        return target


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


# Word-pieces per batch. Measured on the 3,000 longest passages of a real 92k-passage
# library (256 word-pieces each, int8, 2 threads): batches of 32 ran at 22.4 passages/s and
# left the process at 1,060 MB; batches of 8 (2,048 word-pieces) at 25.3/s and 340 MB.
TOKEN_BUDGET = 2048


class OnnxEncoder:
    def __init__(self, name: str, source: Path, backend: str, threads: int | None = None) -> None:
        from tokenizers import Tokenizer

        self.name = name
        path = onnx_file(source, backend)
        self._path, self._backend = path, backend
        self._streams = max(1, threads or len(os.sched_getaffinity(0)))
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        # One batch (a query): one run on every core. Many batches (indexing): one thread per
        # run and as many runs side by side as there are cores, on a second session made on
        # first use; two batches side by side beat one batch on two threads (squad-public
        # passages, int8: 91 -> 99 per second, one thread alone 52; two threads each while
        # side by side: 84-94), since each run has serial stretches a second thread cannot
        # share. A query on one thread took 4.8 ms instead of 2.9.
        self._session = self._open(self._streams)
        self._side_by_side = None if self._streams > 1 else self._session
        self._inputs = [i.name for i in self._session.get_inputs()]
        st = _read_json(source / "sentence_bert_config.json")
        cfg = _read_json(source / "config.json")
        self.window = int(st.get("max_seq_length") or cfg.get("max_position_embeddings", 512))
        pooling = _read_json(source / "1_Pooling" / "config.json")
        self._cls = bool(pooling.get("pooling_mode_cls_token")) and not pooling.get(
            "pooling_mode_mean_tokens", False
        )
        self.dims = int(pooling.get("word_embedding_dimension") or cfg["hidden_size"])
        self.token_counter = WordPieces(source / "tokenizer.json")
        self._tok = Tokenizer.from_file(str(source / "tokenizer.json"))
        self._tok.enable_truncation(self.window)
        self._tok.no_padding()  # batches are padded here, each to its own longest text
        self._pad = int(cfg.get("pad_token_id", 0) or 0)

    def _open(self, threads: int):
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        try:
            return ort.InferenceSession(str(self._path), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001
            raise ModelError(f"cannot load the {self._backend} encoder at {self._path}: {exc}") from exc

    def _single_threaded(self):
        with self._lock:
            if self._side_by_side is None:
                self._side_by_side = self._open(1)
            return self._side_by_side

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._streams, thread_name_prefix="kbapp-onnx")
            return self._pool

    def _batch(self, encodings: list, session) -> np.ndarray:
        """Unit vectors of one padded batch."""
        longest = max(1, max(len(e.ids) for e in encodings))
        ids = np.full((len(encodings), longest), self._pad, dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = 1
            types[row, :n] = e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = session.run(None, {k: feed[k] for k in self._inputs})[0]
        if self._cls:
            vec = hidden[:, 0]
        else:
            m = mask[..., None].astype(np.float32)
            vec = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
        return vec / np.clip(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12, None)

    def count_tokens(self, text: str) -> int:
        """Word-pieces including [CLS]/[SEP], i.e. what the window limit counts."""
        return self.token_counter(text)

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        enc = self._tok.encode_batch([fold(t) for t in texts])
        lengths = [len(e.ids) for e in enc]
        # Longest first, in batches of similar length (little padding) that hold at most
        # TOKEN_BUDGET word-pieces: ONNX Runtime's arena keeps the largest batch's memory
        # for the life of the process.
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        parts = []
        start = 0
        while start < len(order):
            longest = max(1, lengths[order[start]])
            parts.append(order[start : start + max(1, min(batch_size, TOKEN_BUDGET // longest))])
            start += len(parts[-1])
        out = np.empty((len(texts), self.dims), dtype=np.float32)

        if len(parts) == 1 or self._streams == 1:
            for part in parts:
                out[part] = self._batch([enc[i] for i in part], self._session)
        else:
            session = self._single_threaded()

            def run(part: list[int]) -> None:
                out[part] = self._batch([enc[i] for i in part], session)

            # ONNX Runtime releases the GIL while it runs; results land in their own rows.
            list(self._executor().map(run, parts))
        check_normalised(out)
        return out
