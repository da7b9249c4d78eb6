"""The bundled model is the official all-MiniLM-L6-v2: hash and the published similarities."""

import numpy as np
import pytest

from kbapp.embed import BUNDLED_SHA256, bundled_model_dir, verify_bundled
from kbapp.errors import ModelError


def test_bundled_weights_match_the_official_hash():
    verify_bundled(bundled_model_dir())
    assert BUNDLED_SHA256.startswith("53aa5117")


README = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]


def test_reproduces_the_sentence_transformers_readme(torch_encoder):
    real_encoder = torch_encoder
    s = README
    v = real_encoder.encode(s)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = v @ v.T
    assert sims[0, 1] == pytest.approx(0.6660, abs=1e-3)
    assert sims[0, 2] == pytest.approx(0.1046, abs=1e-3)
    assert sims[1, 2] == pytest.approx(0.1411, abs=1e-3)
    # cosine distance equals L2^2 / 2 on unit vectors
    l2 = np.linalg.norm(v[0] - v[2])
    assert l2**2 / 2 == pytest.approx(1 - sims[0, 2], abs=1e-6)
    assert real_encoder.dims == 384 and real_encoder.window == 256


def test_tampered_weights_are_refused(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"not the model")
    with pytest.raises(ModelError, match="sha256"):
        verify_bundled(tmp_path)


@pytest.mark.parametrize("backend", ["onnx-int8", "onnx-fp32"])
def test_missing_model_is_a_clear_error(backend):
    from kbapp.embed import load_encoder

    with pytest.raises(ModelError, match="no model folder at /no/such.*never downloads"):
        load_encoder(f"/no/such/model/folder@{backend}")


@pytest.mark.torch
def test_missing_model_is_a_clear_error_on_the_torch_backend():
    from kbapp.embed import load_encoder

    with pytest.raises(ModelError, match="never downloads"):
        load_encoder("/no/such/model/folder")


def test_the_default_backend_reproduces_the_sentence_transformers_readme():
    """The graph kbapp writes from model.safetensors (no torch) gives the similarities the
    model's own README publishes: fp32 to three places, int8 within 0.03 (its measured error
    against torch: 0.6416 for 0.6660)."""
    from kbapp.config import BUNDLED_MODEL
    from kbapp.embed import load_encoder, model_id

    for backend, tol in (("onnx-fp32", 1e-3), ("onnx-int8", 0.03)):
        sims = (v := load_encoder(model_id(BUNDLED_MODEL, backend)).encode(README)) @ v.T
        assert sims[0, 1] == pytest.approx(0.6660, abs=tol)
        assert sims[0, 2] == pytest.approx(0.1046, abs=tol)
        assert sims[1, 2] == pytest.approx(0.1411, abs=tol)


def test_a_model_without_a_plain_bert_graph_needs_the_torch_extra(tmp_path, monkeypatch):
    """Another architecture is exported through torch; without it the user is told what to
    install, not shown a traceback."""
    import shutil
    import sys

    from kbapp.embed import bundled_model_dir
    from kbapp.embed import onnx as ox

    model = tmp_path / "model"
    shutil.copytree(bundled_model_dir(), model)
    cfg = (model / "config.json").read_text().replace('"gelu"', '"relu"')
    (model / "config.json").write_text(cfg)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setitem(sys.modules, "torch", None)  # as in an install without the extra
    with pytest.raises(ModelError, match=r"activation 'relu'.*pip install .*kbapp\[torch\]"):
        ox.onnx_file(model, "onnx-int8")


@pytest.mark.parametrize("backend,tol", [("onnx-fp32", 1e-4), ("onnx-int8", 0.03)])
def test_onnx_backends_reproduce_the_reference(backend, tol, torch_encoder):
    from kbapp.config import BUNDLED_MODEL
    from kbapp.embed import load_encoder, model_id

    enc = load_encoder(model_id(BUNDLED_MODEL, backend))
    assert enc.name.endswith("@" + backend)  # the backend is part of the model stamp
    assert (enc.dims, enc.window) == (384, 256)
    # more long texts than one batch holds (batches are capped in word-pieces), and short ones
    long = [f"Passage {i}. " + "Oxygen is a chemical element with symbol O and atomic number 8. " * 12
            for i in range(11)]  # fmt: skip
    texts = README + long
    v, ref = enc.encode(texts), torch_encoder.encode(texts)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert np.abs(v @ v.T - ref @ ref.T).max() < tol
    assert (v * ref).sum(1).min() > (0.9999 if backend == "onnx-fp32" else 0.98)
    # the window is counted the same way (the long text is over 256 word-pieces)
    assert [enc.count_tokens(t) for t in texts] == [torch_encoder.count_tokens(t) for t in texts]


def test_a_damaged_onnx_file_is_made_again(tmp_path, monkeypatch):
    from kbapp.embed import bundled_model_dir
    from kbapp.embed import onnx as ox

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = ox.onnx_file(bundled_model_dir(), "onnx-int8")
    good = first.read_bytes()
    first.write_bytes(good[: len(good) // 2])  # a half-written or damaged cache file
    again = ox.onnx_file(bundled_model_dir(), "onnx-int8")
    assert again == first and again.read_bytes() == good


def test_every_backend_embeds_a_ligature_as_the_letters_people_type(torch_encoder, real_encoder):
    stored = "The tank was \ufb01lled di\ufb00erently by the mis\ufb01ts."
    typed = "The tank was filled differently by the misfits."
    for enc in (torch_encoder, real_encoder):
        a, b = enc.encode([stored, typed])
        assert float(a @ b) > 0.9999
        assert enc.count_tokens(stored) == enc.count_tokens(typed)


def test_the_torch_backend_encodes_and_counts_from_two_threads_at_once(torch_encoder,
                                                                       monkeypatch):  # fmt: skip
    """Indexing counts and encodes while a search from the window encodes; the fast
    tokenizer, re-configured by the other thread, failed with "Already borrowed". A model
    folder without tokenizer.json counts with the tokenizer itself."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(torch_encoder, "token_counter", None)
    texts = [("the keel must be inspected every spring " * (1 + 9 * (n % 9))) for n in range(24)]
    alone = torch_encoder.encode(texts[:1])[0]

    def work(n):
        t = texts[n % len(texts)]
        return torch_encoder.encode([t]) if n % 2 else torch_encoder.count_tokens(t)

    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(work, range(96)))
    vectors = [o for o in outs if not isinstance(o, int)]
    assert len(vectors) == 48 and all(v.shape == (1, torch_encoder.dims) for v in vectors)
    assert float(vectors[0][0] @ torch_encoder.encode([texts[1]])[0]) > 0.9999
    assert outs[0] == torch_encoder.count_tokens(texts[0]) and alone.shape == (torch_encoder.dims,)
