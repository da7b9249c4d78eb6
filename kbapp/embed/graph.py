"""A BERT encoder's ONNX graph written straight from its model.safetensors, without torch.

The graph is the one ONNX Runtime's transformer optimizer makes from a torch export of a
BERT model (embedding + layer norm, then per layer: fused multi-head attention, output
projection + residual + layer norm, feed-forward with bias + GELU, projection + residual +
layer norm), operator for operator, so the default path of kbapp needs neither torch nor
transformers. Inputs are int64 `input_ids`, `attention_mask`, `token_type_ids`; the output
`hidden` is the last layer's token vectors (pooling stays in OnnxEncoder).

A model this does not describe (another architecture, another activation, relative
positions, weights only as pytorch_model.bin) raises `Unsupported`; the caller then uses
the torch export where torch is installed.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

_DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": None, "I64": np.int64}
MS = "com.microsoft"


class Unsupported(Exception):
    """This model is not a plain BERT encoder in a safetensors file."""


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as a numpy array (the format is an 8-byte header
    length, a JSON header of names, dtypes, shapes and byte offsets, then the raw data)."""
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
        data = f.read()
    out: dict[str, np.ndarray] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(spec["dtype"])
        if dtype is None:
            raise Unsupported(f"tensor {name} is stored as {spec['dtype']}")
        start, end = spec["data_offsets"]
        arr = np.frombuffer(data[start:end], dtype=dtype).reshape(spec["shape"])
        out[name] = arr.astype(np.float32) if dtype is np.float16 else arr
    return out


def _check(cfg: dict) -> None:
    problems = []
    if cfg.get("model_type") != "bert":
        problems.append(f"model_type {cfg.get('model_type')!r}")
    if cfg.get("hidden_act", "gelu") != "gelu":
        problems.append(f"activation {cfg.get('hidden_act')!r}")
    if cfg.get("position_embedding_type", "absolute") != "absolute":
        problems.append(f"position embeddings {cfg.get('position_embedding_type')!r}")
    if problems:
        raise Unsupported(", ".join(problems))


def build(source: Path, out: Path) -> None:
    """Write the fused fp32 graph of the BERT model in `source` to `out`."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    cfg = json.loads((source / "config.json").read_text())
    _check(cfg)
    weights = source / "model.safetensors"
    if not weights.exists():
        raise Unsupported("no model.safetensors")
    w = read_safetensors(weights)
    if "embeddings.word_embeddings.weight" not in w:  # saved with the "bert." prefix
        w = {k.removeprefix("bert."): v for k, v in w.items()}
    heads, eps = int(cfg["num_attention_heads"]), float(cfg.get("layer_norm_eps", 1e-12))
    layers, width = int(cfg["num_hidden_layers"]), int(cfg["hidden_size"])

    inits: list = []
    nodes: list = []

    def tensor(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value, dtype=np.float32), name))
        return name

    def param(key: str) -> str:
        try:
            return tensor(key, w[key])
        except KeyError:
            raise Unsupported(f"no tensor {key}") from None

    def linear(x: str, key: str, name: str) -> str:
        """x @ W^T (the bias joins the next fused operator, as the optimizer does)."""
        nodes.append(helper.make_node("MatMul", [x, tensor(f"{key}.weight.T", w[f"{key}.weight"].T)],
                                      [name], name=name))  # fmt: skip
        return name

    for n in ("input_ids", "token_type_ids", "attention_mask"):
        nodes.append(helper.make_node("Cast", [n], [f"{n}_int32"], to=TensorProto.INT32))
    e = "embeddings"
    nodes.append(helper.make_node(
        "EmbedLayerNormalization",
        ["input_ids_int32", "token_type_ids_int32", param(f"{e}.word_embeddings.weight"),
         param(f"{e}.position_embeddings.weight"), param(f"{e}.token_type_embeddings.weight"),
         param(f"{e}.LayerNorm.weight"), param(f"{e}.LayerNorm.bias"), "attention_mask_int32"],
        ["embedded", "mask_index"], domain=MS, epsilon=eps))  # fmt: skip
    x = "embedded"
    for i in range(layers):
        p = f"encoder.layer.{i}"
        a = f"{p}.attention.self"
        qkv_w = np.concatenate([w[f"{a}.{k}.weight"].T for k in ("query", "key", "value")], axis=1)
        qkv_b = np.concatenate([w[f"{a}.{k}.bias"] for k in ("query", "key", "value")])
        nodes.append(helper.make_node(
            "Attention", [x, tensor(f"{p}.qkv.weight", qkv_w), tensor(f"{p}.qkv.bias", qkv_b),
                          "mask_index"],
            [f"{p}.context"], domain=MS, num_heads=heads))  # fmt: skip
        o = f"{p}.attention.output"
        nodes.append(helper.make_node(
            "SkipLayerNormalization",
            [linear(f"{p}.context", f"{o}.dense", f"{p}.attended"), x,
             param(f"{o}.LayerNorm.weight"), param(f"{o}.LayerNorm.bias"), param(f"{o}.dense.bias")],
            [f"{p}.normed"], domain=MS, epsilon=eps))  # fmt: skip
        mid = f"{p}.intermediate.dense"
        nodes.append(helper.make_node(
            "BiasGelu", [linear(f"{p}.normed", mid, f"{p}.widened"), param(f"{mid}.bias")],
            [f"{p}.activated"], domain=MS))  # fmt: skip
        o = f"{p}.output"
        last = "hidden" if i == layers - 1 else f"{p}.out"
        nodes.append(helper.make_node(
            "SkipLayerNormalization",
            [linear(f"{p}.activated", f"{o}.dense", f"{p}.narrowed"), f"{p}.normed",
             param(f"{o}.LayerNorm.weight"), param(f"{o}.LayerNorm.bias"), param(f"{o}.dense.bias")],
            [last], domain=MS, epsilon=eps))  # fmt: skip
        x = last

    dims = ["batch", "tokens"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, dims)
              for n in ("input_ids", "attention_mask", "token_type_ids")]  # fmt: skip
    output = helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [*dims, width])
    graph = helper.make_graph(nodes, "encoder", inputs, [output], inits)
    model = helper.make_model(graph, producer_name="kbapp",
                              opset_imports=[helper.make_opsetid("", 17),
                                             helper.make_opsetid(MS, 1)])  # fmt: skip
    model.ir_version = 8
    onnx.save(model, str(out))
