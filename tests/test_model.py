"""The bundled model is the official all-MiniLM-L6-v2: hash and the published similarities."""

import numpy as np
import pytest

from kbapp.embed import BUNDLED_SHA256, bundled_model_dir, verify_bundled
from kbapp.errors import ModelError


def test_bundled_weights_match_the_official_hash():
    verify_bundled(bundled_model_dir())
    assert BUNDLED_SHA256.startswith("53aa5117")


def test_reproduces_the_sentence_transformers_readme(real_encoder):
    s = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
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


def test_missing_model_is_a_clear_error():
    from kbapp.embed import SentenceEncoder

    with pytest.raises(ModelError, match="never downloads"):
        SentenceEncoder("/no/such/model/folder")
