"""The rerank path with a tiny cross-encoder built here (no download): it loads from a
local folder, scores every candidate and reorders by that score."""

import shutil

import pytest
from conftest import make_library

from kbapp.embed import bundled_model_dir
from kbapp.errors import ModelError


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    out = tmp_path_factory.mktemp("tiny-ce")
    src = bundled_model_dir()
    tok = AutoTokenizer.from_pretrained(str(src))
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=1,
                     num_attention_heads=2, intermediate_size=64, num_labels=1)  # fmt: skip
    BertForSequenceClassification(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.mark.torch  # the cross-encoder is sentence-transformers'
def test_rerank_reorders_by_cross_encoder_score(tmp_path, fake_encoder, tiny_cross_encoder):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(6):
        (docs / f"n{i}.md").write_text(f"# Note {i}\n\nPumps and valves item {i} described here.\n")
    lib = make_library(tmp_path / "lib", fake_encoder)
    lib.index([docs])
    plain = lib.search("pumps valves", mode="hybrid", min_dense=-1.0, weak_dense=-1.0)
    ranked = lib.search("pumps valves", mode="hybrid", min_dense=-1.0, weak_dense=-1.0,
                        rerank=True, rerank_model=str(tiny_cross_encoder))  # fmt: skip
    scores = [h.scores["rerank"] for h in ranked.hits]
    assert all(s is not None for s in scores) and scores == sorted(scores, reverse=True)
    assert {h.chunk_id for h in ranked.hits} == {h.chunk_id for h in plain.hits}
    assert "rerank" in ranked.timings_ms
    lib.close()


def test_missing_cross_encoder_is_a_clear_error(tmp_path, fake_encoder):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("Pumps.\n")
    lib = make_library(tmp_path / "lib", fake_encoder)
    lib.index([docs])
    with pytest.raises(ModelError, match="cross-encoder"):
        lib.search("pumps", mode="bm25", rerank=True, rerank_model=str(tmp_path / "none"))
    lib.close()
    shutil.rmtree(docs)
