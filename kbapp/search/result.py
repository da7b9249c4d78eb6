"""What a search returns: the hits, each a cited passage with its scores and why it is
shown, and the answer state with the reason for a no-answer in words."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..kinds import where_of
from ..store.chunks import Passage
from .evidence import Evidence
from .gate import required_floor


@dataclass(frozen=True, kw_only=True)
class Hit(Passage):
    """A passage as a search shows it: its rank, scores, and why it is shown."""

    rank: int
    chunk_id: int
    title: str  # the document's title, or its file name
    scores: dict[str, float | None]
    weak_match: bool
    why: str = ""  # in words, why it is shown ("matches “okafor”", "closest sentence 0.71")
    matched: tuple[str, ...] = ()  # the question's words it holds, as the gate weighed them
    # The passage as it is read where that is not its printed content: a PDF table's rows
    # with their row and column headers ("Year: 1983 | Highways and streets: 23,773.5")
    reading: str | None = None

    @property
    def shown(self) -> str:
        """What a card or a prompt shows of it: the reading, else the printed content."""
        return self.reading if self.reading is not None else self.content


@dataclass
class SearchResult:
    query: str
    state: str  # "ok" | "weak" | "no_answer"
    channel: str
    hits: list[Hit]
    dropped: int
    best_dense: float | None
    floor: float
    weak: float
    timings_ms: dict[str, float] = field(default_factory=dict)
    closest: Hit | None = None  # on no answer: the best passage, below the floor
    floor_source: str = "default"  # "calibrated" | "set" | "default"
    unknown_words: list[str] = field(default_factory=list)  # words the library never uses
    unknown_share: float = 0.0  # their rarity-weighted share of the question
    literal: bool = False  # answered by the question's own words standing in a passage
    narrowed: str = ""  # the search's limits in words ("under ~/x", "holds “heat pump”")
    # Every candidate's evidence in ranked order, when asked for (SearchOptions.explain):
    # what the evaluation prints per query
    evidence: list[Evidence] | None = None
    closest_evidence: Evidence | None = None  # the closest passage's, wherever it ranked

    @property
    def required(self) -> float:
        """What the closest passage had to reach: the floor, raised for unknown words."""
        return round(required_floor(self.floor, self.unknown_share), 4)

    @property
    def reason(self) -> str | None:
        """Why there is no answer, in one sentence (similarity 0-1, higher is closer)."""
        if self.state != "no_answer":
            return None
        whose = {"calibrated": "this library's floor", "set": "the floor you set"}.get(
            self.floor_source, "the default floor")
        bar = f"{whose} {self.floor:.2f}"
        if self.unknown_words and self.required > self.floor + 0.005:
            said = ", ".join(f"\u201c{w}\u201d" for w in self.unknown_words[:3])
            bar += f" ({self.required:.2f} for this question: the library never uses {said})"
        if self.closest is None and self.narrowed:
            return f"no passage that {self.narrowed} matches the question"
        if self.closest is None or self.best_dense is None:
            return f"nothing in the library matched the question at all ({bar})"
        passage = (f"the closest passage ({self.closest.name}, {where_of(self.closest)}, "
                   f"similarity {self.best_dense:.2f})")  # fmt: skip
        if self.best_dense < self.required:
            return f"{passage} is below {bar}"
        if not self.closest.matched:
            return (f"{passage} shares none of the question's words, and similarity alone "
                    f"answers only from {max(self.weak, self.required):.2f}")  # fmt: skip
        return f"{passage} ranked below the passages the search weighs, and none of those is close"

    @property
    def no_answer_message(self) -> str:
        return f"No answer: {self.reason}."
