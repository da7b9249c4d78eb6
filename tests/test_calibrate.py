"""The no-answer gate calibrates itself on the library, per model, and explains itself."""

import json
import shutil

import numpy as np
import pytest
from conftest import SQUAD, FakeEncoder, make_library

from kbapp.calibrate import FALLBACK_FLOOR, off_topic_questions, probe_from
from kbapp.cli import result_json


class OtherFakeEncoder(FakeEncoder):
    """Another model: the same words land in other dimensions."""

    name = "fake-hash-64-other"

    def encode(self, texts, batch_size: int = 32) -> np.ndarray:
        return np.roll(super().encode(texts), 7, axis=1)


def squad_docs(tmp_path, names=("Nikola_Tesla.md", "Oxygen.md", "Warsaw.md", "Normans.md")):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in names:
        if (SQUAD / "corpus" / name).exists():
            shutil.copy(SQUAD / "corpus" / name, docs / name)
    return docs


def test_the_probe_bank_is_shipped_and_probes_are_question_sized():
    bank = off_topic_questions()
    assert len(bank) >= 200 and len(set(bank)) == len(bank)
    p = probe_from("Short. The keel of every wooden boat must be inspected for cracks each "
                   "spring before it goes back into the water.", "1")  # fmt: skip
    assert p is not None and len(p.split()) == 12 and p.startswith("The keel")


def test_indexing_calibrates_and_a_model_change_calibrates_again(tmp_path):
    docs = squad_docs(tmp_path)
    lib = make_library(tmp_path / "lib", FakeEncoder())
    assert lib.gate_options(lib.settings.search)[1] == "default"  # nothing measured yet
    lib.index([docs])
    cal = lib.calibration
    assert cal is not None and cal.model == lib.model
    assert cal.in_probes >= 50 and cal.off_probes == len(off_topic_questions())
    opts, source = lib.gate_options(lib.settings.search)
    assert source == "calibrated" and opts.min_dense == cal.floor and opts.weak_dense == cal.weak
    assert lib.search("Tesla alternating current").floor == cal.floor
    lib.close()

    other = make_library(tmp_path / "lib", OtherFakeEncoder())
    assert other.calibration is None  # another model: its own calibration, not the first's
    other.index()
    assert other.calibration is not None and other.calibration.model == other.model
    assert other.calibration.model != cal.model
    other.close()


def test_an_explicit_floor_wins_until_reset(tmp_path, library):
    library.index([squad_docs(tmp_path)])
    cal = library.calibration
    r = library.search("Tesla alternating current", min_dense=0.99)
    assert r.floor == 0.99 and r.floor_source == "set" and r.state == "no_answer"
    assert r.reason.startswith("the closest passage (") and "the floor you set 0.99" in r.reason
    assert library.search("Tesla alternating current").floor == cal.floor  # reset: omitted


def test_words_the_library_never_uses_raise_the_floor_and_say_so(tmp_path, library):
    """A question naming what the library never mentions needs a closer passage to be
    answered; one in the library's own words does not, and the reason names the words."""
    library.index([squad_docs(tmp_path)])
    known = library.search("Tesla alternating current induction motor", min_dense=0.0)
    assert known.unknown_words == [] and known.required == known.floor
    # Letters and digits written together are known by their pieces: Tesla, born 1856.
    assert library.search("Tesla1856 induction motor", min_dense=0.0).unknown_words == []
    asked = "Tesla alternating current induction motor Rankine Zeppelinstrasse"
    base = library.search(asked, min_dense=0.0)
    assert base.unknown_words == ["rankine", "zeppelinstrasse"]
    assert 0.3 < base.unknown_share < 1.0  # rare words, but half the question is known
    # A floor the closest passage clears: the known question is answered, the one naming
    # two things the library never uses is not, and the reason says which words.
    floor = round(base.best_dense - 0.05, 2)
    assert library.search("Tesla alternating current induction motor", min_dense=floor).hits
    r = library.search(asked, min_dense=floor)
    assert r.best_dense >= floor and r.state == "no_answer" and r.required > r.best_dense
    assert "never uses \u201crankine\u201d, \u201czeppelinstrasse\u201d" in r.reason
    out = result_json(r)
    assert out["unknown_words"] == ["rankine", "zeppelinstrasse"] and out["required"] == r.required


def test_too_small_a_library_keeps_the_default_floor(tmp_path, library):
    docs = tmp_path / "d"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nOne short note about boats and keels.\n")
    library.index([docs])
    assert library.calibration is None
    assert library.gate_options(library.settings.search)[0].min_dense == FALLBACK_FLOOR


@pytest.mark.model
def test_calibration_on_a_real_corpus_keeps_answerable_questions(tmp_path, real_library):
    """On squad-public itself, with the real model: the self-calibrated gate refuses at
    most 5% of the answerable questions, and abstains on at least as many unanswerable ones
    as the best single floor fitted on these very questions would (issue #10's bar)."""
    real_library.index([SQUAD / "corpus"])
    cal = real_library.calibration
    assert cal is not None and 0.2 <= cal.floor <= 0.6
    rows = [json.loads(x) for x in (SQUAD / "golden.jsonl").read_text().splitlines()]
    pos = [real_library.search(r["query"]) for r in rows if r.get("needle")]
    neg = [real_library.search(r["query"]) for r in rows if not r.get("needle")]
    refused = sum(r.state == "no_answer" for r in pos)
    abstained = sum(r.state == "no_answer" for r in neg)
    best = sorted(r.best_dense for r in pos)
    oracle = best[int(0.05 * len(pos))]  # refuses the 5% of answerable questions below it
    oracle_abstained = sum(r.best_dense < oracle for r in neg)
    # Re-indexing the same files moves both counts by about two either way (int8 vectors
    # depend a little on their batch; seven indexings refused 7-12 of 240; four indexings
    # abstained on 51-53 of 60 while the oracle floor's count was 50-52, docs/EVALUATION.md).
    assert refused <= 0.05 * len(pos) + 2, (refused, cal)
    assert abstained >= oracle_abstained - 2, (abstained, oracle_abstained, oracle, cal)
    out = result_json(real_library.search("which hiking boots suit wide feet on long treks"))
    assert out["state"] == "no_answer" and out["floor_source"] == "calibrated"
    assert out["floor"] == cal.floor and out["best"] < cal.floor
    assert "this library's floor" in out["reason"] and out["closest"]["document"]


def test_the_same_files_calibrate_the_same_whatever_order_they_were_indexed_in(tmp_path):
    names = ("Nikola_Tesla.md", "Oxygen.md", "Warsaw.md", "Normans.md", "Amazon_rainforest.md")
    docs = squad_docs(tmp_path, names)
    floors = []
    for n, order in enumerate((sorted(docs.iterdir()), sorted(docs.iterdir(), reverse=True))):
        lib = make_library(tmp_path / f"lib{n}", FakeEncoder())
        for f in order:  # one run per file: chunk ids follow this order
            lib.index([f])
        lib.calibrate()
        floors.append((lib.calibration.floor, lib.calibration.in_p05, lib.calibration.in_probes))
        lib.close()
    assert floors[0] == floors[1]
