"""Switching between two real local models (the bundled one and a tiny one built here):
documents go stale, are re-embedded, and no query ever mixes the two vector spaces."""

import json
import shutil
import struct
import threading

import numpy as np
import pytest
from conftest import SQUAD, make_library

from kbapp.config import BUNDLED_MODEL
from kbapp.embed import bundled_model_dir, load_encoder, model_id
from kbapp.errors import SearchError


def write_safetensors(path, tensors: dict) -> None:
    """The safetensors layout: an 8-byte header length, a JSON header, the raw data."""
    header, blobs, offset = {}, [], 0
    for name, arr in tensors.items():
        data = np.ascontiguousarray(arr, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(data)]}  # fmt: skip
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(head)) + head + b"".join(blobs))


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A second real sentence model, 32 dimensions, one layer of random BERT weights with the
    bundled model's vocabulary, run by the default ONNX backend (no torch needed)."""
    root = tmp_path_factory.mktemp("tiny-st")
    src = bundled_model_dir()
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(src / name, root / name)
    cfg = json.loads((src / "config.json").read_text())
    h, inner = 32, 64
    cfg.update(hidden_size=h, num_hidden_layers=1, num_attention_heads=2, intermediate_size=inner)
    (root / "config.json").write_text(json.dumps(cfg))
    (root / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
    (root / "1_Pooling").mkdir()
    (root / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": h, "pooling_mode_mean_tokens": True})
    )
    rng = np.random.default_rng(1)

    def r(*shape):
        return rng.normal(0, 0.02, shape)

    w = {"embeddings.word_embeddings.weight": r(cfg["vocab_size"], h),
         "embeddings.position_embeddings.weight": r(512, h),
         "embeddings.token_type_embeddings.weight": r(2, h),
         "embeddings.LayerNorm.weight": np.ones(h), "embeddings.LayerNorm.bias": np.zeros(h)}  # fmt: skip
    p = "encoder.layer.0"
    for k in ("query", "key", "value"):
        w[f"{p}.attention.self.{k}.weight"], w[f"{p}.attention.self.{k}.bias"] = r(h, h), r(h)
    for part, (out, into) in {"attention.output": (h, h), "intermediate": (inner, h),
                              "output": (h, inner)}.items():  # fmt: skip
        w[f"{p}.{part}.dense.weight"], w[f"{p}.{part}.dense.bias"] = r(out, into), r(out)
        if part != "intermediate":
            w[f"{p}.{part}.LayerNorm.weight"], w[f"{p}.{part}.LayerNorm.bias"] = np.ones(h), r(h)
    write_safetensors(root / "model.safetensors", w)
    return model_id(str(root), "onnx-fp32")


def test_switching_models_never_mixes_vector_spaces(tmp_path, real_encoder, tiny_model):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("Oxygen.md", "Warsaw.md", "Kenya.md"):
        (docs / name).write_bytes((SQUAD / "corpus" / name).read_bytes())
    lib = make_library(tmp_path / "lib", real_encoder)
    lib.index([docs])
    assert lib.search("What is the capital of Poland?").hits
    first = lib.calibration
    assert first is not None and first.model == lib.model  # the gate calibrated for this model
    lib.close()

    tiny = load_encoder(tiny_model)
    assert tiny.dims == 32 and tiny.name != real_encoder.name
    lib = make_library(tmp_path / "lib", tiny)
    status = lib.status()
    assert {d.state for d in status.documents} == {"stale"}
    with pytest.raises(SearchError, match="re-embedded"):  # said, not a silent empty answer
        lib.search("capital of Poland", min_dense=-1.0)

    # re-embed only the first document, then stop: a half-migrated library
    cancel = threading.Event()

    def stop_after_first(p):
        if p.done >= 1:
            cancel.set()

    lib.index(progress=stop_after_first, cancel=cancel)
    states = {d.name: (d.state, d.model) for d in lib.status().documents}
    migrated = {n for n, (s, _) in states.items() if s == "indexed"}
    assert len(migrated) == 1 and all(states[n][1] == tiny_model for n in migrated)
    res = lib.search("capital city", min_dense=-1.0, weak_dense=-1.0)
    assert res.hits and {h.name for h in res.hits} <= migrated  # nothing from the stale ones
    assert (
        len(lib.vectors)
        == lib.store.conn.execute(
            "SELECT count(*) FROM chunks c JOIN documents d ON d.id=c.doc_id WHERE d.model=?",
            (tiny_model,),
        ).fetchone()[0]
    )
    lib.index()
    assert {d.state for d in lib.status().documents} == {"indexed"}
    # The new model calibrated its own gate by itself: its own floor, stamped with it, and
    # the one its searches use; the first model's stays stored under the first model.
    cal = lib.calibration
    assert cal is not None and cal.model == tiny_model and cal.computed_at > first.computed_at
    assert lib.search("capital city").floor == cal.floor and cal.floor != first.floor
    lib.close()

    # opened again without naming a model, the library keeps the one it was indexed with
    lib = make_library(tmp_path / "lib")
    assert lib.model == tiny_model and lib.status().count("stale") == 0
    lib.close()

    # and back: the bundled model's documents are stale again until re-embedded
    lib = make_library(tmp_path / "lib", real_encoder)
    assert {d.state for d in lib.status().documents} == {"stale"}
    lib.index()
    hits = lib.search("What is the capital of Poland?").hits
    assert hits and hits[0].name == "Warsaw.md"
    lib.close()


def test_two_backends_of_one_model_never_mix_in_one_search(tmp_path, real_encoder):
    """The int8 default and fp32 are the same model but not the same vectors:
    switching backend makes every document stale, and a search meets one backend's vectors
    only."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("Oxygen.md", "Warsaw.md"):
        (docs / name).write_bytes((SQUAD / "corpus" / name).read_bytes())
    lib = make_library(tmp_path / "lib", real_encoder)
    lib.index([docs])
    assert lib.search("What is the capital of Poland?").hits
    lib.close()

    fp32 = load_encoder(model_id(BUNDLED_MODEL, "onnx-fp32"))
    lib = make_library(tmp_path / "lib", fp32)
    assert lib.model == fp32.name != real_encoder.name  # the backend is in the stamp
    assert {d.state for d in lib.status().documents} == {"stale"}
    with pytest.raises(SearchError, match="re-embedded"):
        lib.search("capital of Poland", min_dense=-1.0)
    cancel = threading.Event()
    lib.index(progress=lambda p: cancel.set() if p.done >= 1 else None, cancel=cancel)
    migrated = {d.name for d in lib.status().documents if d.state == "indexed"}
    assert len(migrated) == 1
    res = lib.search("oxygen and the capital of Poland", min_dense=-1.0, weak_dense=-1.0)
    assert res.hits and {h.name for h in res.hits} <= migrated
    lib.close()
