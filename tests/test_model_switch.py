"""Switching between two real local models (the bundled one and a tiny one built here):
documents go stale, are re-embedded, and no query ever mixes the two vector spaces."""

import threading

import pytest
from conftest import SQUAD, make_library

from kbapp.embed import bundled_model_dir, load_encoder
from kbapp.errors import SearchError


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, BertConfig, BertModel

    root = tmp_path_factory.mktemp("tiny-st")
    bert_dir = root / "bert"
    tok = AutoTokenizer.from_pretrained(str(bundled_model_dir()))
    torch.manual_seed(1)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=1,
                     num_attention_heads=2, intermediate_size=64)  # fmt: skip
    BertModel(cfg).save_pretrained(bert_dir)
    tok.save_pretrained(bert_dir)
    word = models.Transformer(str(bert_dir), max_seq_length=128)
    st = SentenceTransformer(modules=[word, models.Pooling(32), models.Normalize()], device="cpu")
    out = root / "tiny-model"
    st.save(str(out))
    return str(out)


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

    tiny = load_encoder(str(tiny_model))
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


def test_two_backends_of_one_model_never_mix_in_one_search(tmp_path, real_encoder, torch_encoder):
    """The int8 default and the torch reference are the same model but not the same vectors:
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

    lib = make_library(tmp_path / "lib", torch_encoder)
    assert lib.model == torch_encoder.name != real_encoder.name  # the backend is in the stamp
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
