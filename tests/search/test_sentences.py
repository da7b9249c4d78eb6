"""A passage is as close to a question as its closest sentence: an answer that is one
sentence of a passage about other things is not averaged away."""

import numpy as np
import pytest
from conftest import SQUAD, make_library

from kbapp.chunk import Chunk, sentence_texts

HEADER = "[Pumps > Care]\n"


def _chunk(content: str) -> Chunk:
    return Chunk(0, "Care", 0, len(content), content, HEADER + content)


def test_each_sentence_is_read_with_its_passage_header():
    texts = sentence_texts(_chunk("Prime the pump before use. A dry pump overheats quickly."))
    assert texts == [HEADER + "Prime the pump before use.", HEADER + "A dry pump overheats quickly."]


def test_one_sentence_lists_and_fragments_are_not_read_apart():
    assert sentence_texts(_chunk("Prime the pump before use.")) == []  # the passage says it
    assert sentence_texts(_chunk("Prime it. See Fig. 3.")) == []  # fragments: too short
    listed = "Check these parts weekly:\n- the filter\n- the seal\nReplace them yearly. Oil the shaft."
    assert sentence_texts(_chunk(listed)) == [  # a list stays inside its sentence
        HEADER + "Check these parts weekly:\n- the filter\n- the seal\nReplace them yearly.",
        HEADER + "Oil the shaft.",
    ]


def test_sentence_vectors_are_stored_and_scored(tmp_path, fake_encoder):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pump.md").write_text(
        "# Pump\n\nThe pump sits in the shed. Prime the pump before use. "
        "The shed door sticks in winter.\n"
    )
    (docs / "tool.py").write_text("def prime(pump):\n    return pump.fill()\n\n\ndef drain(pump):\n    pass\n")
    lib = make_library(tmp_path / "lib", fake_encoder)
    lib.index([docs])
    rows = lib.store.chunks.rows(lib.store.chunks.searchable_ids(lib.model), lib.model)
    by_name = {r.name: r for r in rows.values()}
    prose = by_name["pump.md"]
    stored = prose.sentences(fake_encoder.dims)
    wanted = fake_encoder.encode(sentence_texts(_as_chunk(prose)))
    assert stored is not None and stored.shape == wanted.shape
    assert np.allclose(stored, wanted, atol=1e-3)  # kept as float16
    assert by_name["tool.py"].sentence_vectors is None  # code has no sentences

    q = "prime the pump before use"
    hit = lib.search(q, mode="hybrid", min_dense=-1.0, weak_dense=-1.0).hits[0]
    assert hit.path.endswith("pump.md")
    qvec = fake_encoder.encode([q])[0]
    assert hit.scores["sentence"] == pytest.approx(float((stored @ qvec).max()), abs=1e-5)
    assert hit.scores["sentence"] > hit.scores["dense"]  # one sentence says it all
    off = lib.search(q, mode="hybrid", sentences=False, min_dense=-1.0, weak_dense=-1.0).hits[0]
    assert off.scores["sentence"] is None
    lib.close()


def _as_chunk(row) -> Chunk:
    return Chunk(0, row.section, row.char_from, row.char_to, row.content, row.text)


# squad-public questions whose answer is one sentence of a longer passage
QUESTIONS = [
    ("What type of atmosphere helped fuel the fire throughout the cabin?",
     "an electrical fire began in the cabin"),
    ("What body of water sat to the west of the Mongol Empire when Genghis Khan died?",
     "stretched from the Caspian Sea"),
    ("Where is 97% of the population located?",
     "together constitute around 97% of the nation's residents"),
]  # fmt: skip


@pytest.mark.model
def test_an_answer_inside_a_longer_passage_comes_first(tmp_path, real_encoder):
    lib = make_library(tmp_path / "lib", real_encoder)
    lib.index([SQUAD / "corpus"])

    def first(sentences: bool) -> list[bool]:
        return [needle in lib.search(q, sentences=sentences, min_dense=-1.0,  # ranks, not
                                     weak_dense=-1.0).hits[0].content  # the gate
                for q, needle in QUESTIONS]  # fmt: skip

    assert all(first(True)), first(True)
    assert not all(first(False))  # the passage's own vector alone does not put them first
    lib.close()
