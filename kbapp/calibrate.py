"""Self-calibration of the no-answer gate on the library itself, for its own model.

No question written by the user and no language model: kbapp measures how close
*off-topic* questions come to this library (a shipped bank of everyday questions over
many domains, resources/probes/off-topic.txt) and how close *in-library* questions come
(probes made from the library's own sentences, sampled across documents and cut to
question length, so a probe resembles a question about a passage, not the passage). The
floor is set for the stated target: at most 5% of in-library probes refused; where the
off-topic probes all stay further below, the floor sits between the two distributions.

The result is stored in the library stamped with the model id, so a model change
calibrates again by itself; an explicit floor (CLI option, settings) still wins.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from .search.evidence import weigh
from .search.gate import required_floor

# The share of the library's own probes the floor may refuse: under the 5% the gate promises
# for real questions, because an indexing's int8 vectors move the floor by about +-0.004
# (seven indexings of squad-public at 0.05 on an AVX-512 VNNI CPU: 10-13 of 240 refused, four
# over 5%; at 0.045: 7-11, abstaining on 52-54 of 60 against the oracle's 50-51; at 0.04:
# 6-7 refused but 49-51 abstained, under the oracle; docs/EVALUATION.md).
FALSE_REFUSAL_TARGET = 0.045
MAX_IN_PROBES = 1000  # 300 moved squad-public's floor 0.394-0.423 with the sample
WEAK_MARGIN = 0.08  # the weak band's width above the floor (0.42 / 0.50 before)
MIN_CHUNKS = 20  # fewer chunks than this: too little to measure; the fixed floor stands
# Bounds no calibration goes past: a floor under 0.20 admits anything, over 0.60 refuses
# ordinary paraphrases (measured on squad-public, docs/EVALUATION.md).
FLOOR_BOUNDS = (0.20, 0.60)
FALLBACK_FLOOR, FALLBACK_WEAK = 0.42, 0.50
_WORD = re.compile(r"\w[\w'’-]*", re.U)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


@dataclass(frozen=True)
class Calibration:
    model: str
    floor: float
    weak: float
    in_probes: int
    off_probes: int
    in_p05: float  # the in-library probes' 5th percentile similarity
    off_p95: float  # the off-topic probes' 95th percentile similarity
    expected_abstain: float  # share of off-topic probes the floor refuses
    chunks: int
    seconds: float
    computed_at: float

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, raw: str) -> Calibration | None:
        try:
            return cls(**json.loads(raw))
        except (TypeError, ValueError):
            return None


def meta_key(model: str) -> str:
    return f"calibration@{model}"


def off_topic_questions() -> list[str]:
    path = Path(__file__).resolve().parent.parent / "resources" / "probes" / "off-topic.txt"
    if not path.exists():  # installed as a package: the copy shipped inside it
        path = Path(str(resources.files("kbapp") / "probes" / "off-topic.txt"))
    lines = path.read_text(encoding="utf-8").splitlines()
    return [q.strip() for q in lines if q.strip() and not q.startswith("#")]


PROBE_WORDS = 12


# A sentence opening with one of these does not name its subject ("He spent the rest of
# his career in this position at the"); a question about it would. Such sentences make the
# library's hardest probes without being like any question asked of it, so they are not
# used (English; in other languages every sentence stays a candidate).
NAMES_NOTHING = frozenset({
    "he", "she", "it", "they", "this", "these", "those", "that", "his", "her", "its", "their",
    "them", "however", "also", "then", "but", "and", "such", "there", "here", "we", "our",
    "both", "which",
})  # fmt: skip


def probe_from(content: str, salt: str) -> str | None:
    """A question-sized probe from a passage: the first dozen words of one of its
    sentences of 8+ words that names its subject. Measured on squad-public
    (docs/EVALUATION.md): such probes come as close to their library as real questions
    about it (median similarity 0.66 vs 0.65); cutting words out made them too far (0.33);
    skipping sentences that open with a pronoun or linking word moved the 5th percentile
    0.397 -> 0.406 (real questions: 0.417)."""
    sentences = []
    for s in _SENTENCE.findall(content):
        words = _WORD.findall(s)
        if len(words) >= 8 and words[0].lower() not in NAMES_NOTHING:
            sentences.append(s)
    if not sentences:
        return None
    pick = int(hashlib.sha1(salt.encode()).hexdigest(), 16) % len(sentences)
    return " ".join(_WORD.findall(sentences[pick])[:PROBE_WORDS])


def _nearest(vectors, queries: np.ndarray) -> list[float]:
    out = []
    for q in queries:
        hits = vectors.query(q, 1)
        out.append(hits[0][1] if hits else 0.0)
    return out


def calibrate(lib) -> Calibration | None:
    """Measure and return the library's calibration (None if it is too small)."""
    started = time.perf_counter()
    # In document order and salted by the passage's own text, not by id or place: ids follow
    # the order documents were committed in (parallel extraction changes it from run to
    # run), and the same files in another folder must calibrate the same.
    ids = lib.store.chunks.searchable_ids(lib.model, by_document=True)
    if len(ids) < MIN_CHUNKS:
        return None
    rows = lib.store.chunks.rows(_spread(lib, ids), lib.model)
    probes = []
    for row in rows.values():
        p = probe_from(row.content, row.content)
        if p:
            probes.append(p)
    off = off_topic_questions()
    if len(probes) < MIN_CHUNKS // 2:
        return None
    enc = lib.encoder
    vectors = lib.vectors
    in_sims = np.array(_nearest(vectors, enc.encode(probes)))
    off_sims = np.array(_nearest(vectors, enc.encode(off)))
    in_p05 = float(np.quantile(in_sims, FALSE_REFUSAL_TARGET))
    off_p95 = float(np.quantile(off_sims, 0.95))
    # As many off-topic questions refused as the false-refusal target allows: the floor
    # is the in-library 5th percentile, lowered to the middle of the gap where the two
    # distributions do not meet (fewer refusals, no off-topic question let through).
    floor = in_p05 if off_p95 >= in_p05 else (in_p05 + off_p95) / 2
    floor = float(min(max(floor, FLOOR_BOUNDS[0]), FLOOR_BOUNDS[1]))
    # What the gate will do with the off-topic probes: the floor raised, per question, for
    # the words this library never uses (the in-library probes are the library's own words:
    # nothing to raise).
    size = len(vectors)  # a count query on a team library: once, not per question
    required = np.array([required_floor(floor, weigh(lib.store.chunks, q, size).unknown_share)
                         for q in off])  # fmt: skip
    return Calibration(
        model=lib.model, floor=round(floor, 4), weak=round(floor + WEAK_MARGIN, 4),
        in_probes=len(probes), off_probes=len(off), in_p05=round(in_p05, 4),
        off_p95=round(off_p95, 4),
        expected_abstain=round(float(np.mean(off_sims < required)), 4), chunks=len(ids),
        seconds=round(time.perf_counter() - started, 2), computed_at=time.time(),
    )  # fmt: skip


def _spread(lib, ids: list[int]) -> list[int]:
    """Up to MAX_IN_PROBES chunk ids spread evenly over the library (every document gets
    its share, in order), the same ids on every run for the same library."""
    if len(ids) <= MAX_IN_PROBES:
        return list(ids)
    step = len(ids) / MAX_IN_PROBES
    return [ids[int(i * step)] for i in range(MAX_IN_PROBES)]
