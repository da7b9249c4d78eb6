"""One search request from query to gated, scored hits."""

from __future__ import annotations

import math
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..config import Scope, SearchOptions
from ..embed import Encoder
from ..errors import SearchError
from ..fold import pieces
from ..kinds import where_of
from ..paths import printable
from ..store.chunks import Chunks
from ..store.vectors import VectorIndex
from . import bm25
from .evidence import KEYWORD_SHARE, Evidence, quotes, weigh, weigh_candidate, why
from .fuse import rrf, score_sum
from .gate import apply_gate, required_floor
from .query import Parsed, parse_query
from .rerank import rerank_scores
from .route import looks_like_symbol, route

MAX_QUERY_CHARS = 2000
# BM25 runs beside the query's embedding and the ANN lookup: SQLite, ONNX Runtime and
# hnswlib all release the GIL, so on a big library a hybrid search costs about its slower
# channel instead of the sum of both (docs/EVALUATION.md, search at 84k real passages).
_CHANNELS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kbapp-bm25")


@dataclass(frozen=True)
class Hit:
    rank: int
    chunk_id: int
    doc_id: int
    path: str
    name: str
    title: str
    kind: str
    section: str
    char_from: int
    char_to: int
    page_from: int | None
    page_to: int | None
    content: str
    scores: dict[str, float | None]
    weak_match: bool
    locator: str | None = None  # a sheet's A1 range or a code line range, when the source has one
    symbol: str | None = None
    line_from: int | None = None
    line_to: int | None = None
    why: str = ""  # in words, why it is shown ("matches “okafor”", "closest sentence 0.71")


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
        return (
            f"the closest passage ({self.closest.name}, {where_of(self.closest)}, similarity "
            f"{self.best_dense:.2f}) is below {bar}"
        )

    @property
    def no_answer_message(self) -> str:
        return f"No answer: {self.reason}."


def _narrowed(scope: Scope | None, parsed: Parsed) -> str:
    said = [parsed.describe()] if parsed.narrowed else []
    if scope is not None:
        said.append(f"is in a document {scope.describe()}")
    return " and ".join(said)


def clean_query(query: str) -> str:
    q = " ".join(printable(query or "").split())
    if not q:
        raise SearchError("the query is empty; type some words to search for")
    return q[:MAX_QUERY_CHARS]


NAMED = 0.5
_NAME_SEPARATORS = re.compile(r"[-_]+")


def _words(text: str) -> set[str]:
    """Content words, a compound as one word beside its parts ("4.4": "4 4", "4"; as BM25
    reads it, bm25.terms), and the letter and digit pieces of a word that mixes them
    ("FY2018": "fy2018", "fy", "2018"), so "FY2018" in a question meets "2018" in a title
    and "4.4" names release 4.4's notes, not every 4.x's."""
    out = set()
    for w in bm25.terms(text):
        if w not in bm25.STOPWORDS:
            out.add(w)
            parts = pieces(w)
            if len(parts) > 1:
                out.update(parts)
    return out


def _title_ranked(q: str, order: list[int], rows: dict) -> dict[int, float]:
    """The candidates whose document the question names, among look-alike documents: it
    holds most of what sets that document's title (or file name) apart from the other
    candidates' ("3.9" among twenty "What's New In Python X.Y"), a share of at least NAMED
    of the title's words weighted by rarity. Each named candidate with its document's share,
    best named first, ties in the given order. A heading mistaken for a title (a long
    sentence) is never named by a few common words."""
    asked = _words(q)
    if not asked:
        return {}
    titles: dict[int, set[str]] = {}
    for i in order:
        r = rows[i]
        if r.doc_id not in titles:
            # In a file name "-" and "_" separate words: "ferrymaster-4.4" is two words
            stem = _NAME_SEPARATORS.sub(" ", Path(r.name).stem)
            titles[r.doc_id] = _words(f"{r.title or ''} {stem}")
    n = len(titles)
    df: dict[str, int] = {}
    for words in titles.values():
        for w in words:
            df[w] = df.get(w, 0) + 1
    share = {}
    for d, words in titles.items():
        total = sum(math.log(1 + n / df[w]) for w in words)
        hit = sum(math.log(1 + n / df[w]) for w in words & asked)
        # Only among look-alikes (another candidate's title shares a word): elsewhere the
        # title is one topic word ("budget.xlsx") that BM25 already weighs in the header.
        family = any(df[w] > 1 for w in words)
        share[d] = hit / total if total and family else 0.0
    named = [i for i in order if share[rows[i].doc_id] >= NAMED]
    named.sort(key=lambda i: -share[rows[i].doc_id])  # stable: the given order within
    return {i: share[rows[i].doc_id] for i in named}


def _closest_sentences(ids: list[int], rows: dict, qvec: np.ndarray | None) -> dict[int, float]:
    """The query's cosine to the closest sentence of each passage that has sentence vectors
    (passages of two or more sentences; chunk.sentence_texts)."""
    if qvec is None:
        return {}
    out = {}
    for i in ids:
        m = rows[i].sentences(len(qvec))
        if m is not None:
            out[i] = float((m @ qvec).max())
    return out


def _phrases_ask(question, parsed: Parsed) -> bool:
    """The quoted phrases are what the question asks: at least half of its content words,
    weighted by rarity (`"heat pump"`, `Who called themselves the "People's President"?`),
    not `In what year did Edmond characterize a "good" algorithm?`, of which a passage
    holding "good" holds one common word."""
    quoted = {w for p in parsed.phrases for w in p}
    return not question.weights or question.share(quoted) >= KEYWORD_SHARE


class Searcher:
    """Stateless over (chunk store, vector index, encoder); safe to make per request."""

    def __init__(
        self, chunks: Chunks, index: VectorIndex | None, encoder: Encoder | None, model: str,
    ) -> None:  # fmt: skip
        self.chunks = chunks
        self.index = index
        self.encoder = encoder
        self.model = model

    def _bm25(
        self, q: str, limit: int, phrase: bool, scope: Scope | None, parsed: Parsed
    ) -> tuple[list[tuple[int, float]], float]:
        t = time.perf_counter()
        found = bm25.search(self.chunks, q, limit, phrase=phrase, scope=scope)
        for words in parsed.phrases:  # passages that hold a quoted phrase come first
            held = bm25.search(self.chunks, " ".join(words), limit, phrase=True, scope=scope)
            seen = {i for i, _ in held}
            found = held + [(i, s) for i, s in found if i not in seen]
        return found, (time.perf_counter() - t) * 1000

    def search(self, query: str, opts: SearchOptions, scope: Scope | None = None) -> SearchResult:
        """Rank the library's passages for the query and gate them. `scope` narrows the
        search to some documents; "phrases" and -words in the query narrow the passages."""
        typed = clean_query(query)
        parsed = parse_query(typed)
        q = parsed.text
        if scope is not None and scope.everything:
            scope = None
        within = self.chunks.scoped_ids(self.model, scope) if scope is not None else None
        if within is not None and not within:
            raise SearchError(f"no indexed document is {scope.describe()}")
        t0 = time.perf_counter()
        channel = route(q, opts.mode, opts.prose_mode)
        symbol = looks_like_symbol(q)
        trusted = channel == "bm25"
        timings: dict[str, float] = {}

        lexical_job = None
        if channel in ("bm25", "hybrid"):
            lexical_job = _CHANNELS.submit(self._bm25, q, opts.candidates * 2, symbol, scope,
                                           parsed)  # fmt: skip

        qvec = None
        if not (trusted and symbol):
            if self.encoder is None:
                raise SearchError("the embedding model is not loaded yet; try again in a moment")
            t = time.perf_counter()
            qvec = self.encoder.encode([q])[0]
            timings["embed"] = (time.perf_counter() - t) * 1000

        dense: list[tuple[int, float]] = []
        lexical: list[tuple[int, float]] = []
        if channel in ("dense", "hybrid") and self.index is not None and qvec is not None:
            t = time.perf_counter()
            dense = self.index.query(qvec, opts.candidates, within)
            timings["dense"] = (time.perf_counter() - t) * 1000
        if lexical_job is not None:
            lexical, timings["bm25"] = lexical_job.result()

        dense_sim = dict(dense)
        sentence_sim: dict[int, float] = {}
        bm25_score = dict(lexical)
        fused: dict[int, float] = {}
        if channel == "dense":
            order = [i for i, _ in dense]
        elif channel == "bm25":
            order = [i for i, _ in lexical]
        else:
            order = list(dict.fromkeys([*(i for i, _ in dense), *(i for i, _ in lexical)]))
        rows = self.chunks.rows(order, self.model)
        order = [i for i in order if i in rows and parsed.admits(rows[i].content)]
        if parsed.narrowed:
            dense = [(i, d) for i, d in dense if i in rows and parsed.admits(rows[i].content)]
            lexical = [(i, b) for i, b in lexical if i in rows and parsed.admits(rows[i].content)]

        def similarities(ids: list[int]) -> None:
            """The query's cosine to the candidates the ANN lookup did not return."""
            missing = [i for i in ids if i not in dense_sim and rows[i].vector is not None]
            if qvec is not None and missing:
                mat = np.frombuffer(b"".join(rows[i].vector for i in missing), dtype=np.float32)
                sims = mat.reshape(len(missing), -1) @ qvec
                dense_sim.update(zip(missing, (float(s) for s in sims), strict=True))

        if channel == "hybrid":  # the searchable candidates of both channels, fused with a
            # third signal: the candidates of the document the question names
            ranked = [[i for i, _ in dense if i in rows], [i for i, _ in lexical if i in rows]]
            if opts.fusion == "rrf":
                fused = dict(rrf(ranked, k=opts.rrf_k))
                named = _title_ranked(q, list(fused), rows)
                if named:
                    fused = dict(rrf([*ranked, list(named)], k=opts.rrf_k))
            else:  # score fusion needs every candidate's similarity, not only the top's;
                # a passage is as close as its closest sentence (the gate keeps the passage's)
                similarities(order)
                if opts.sentences:
                    sentence_sim.update(_closest_sentences(order, rows, qvec))
                closest = {i: max(dense_sim.get(i, 0.0), sentence_sim.get(i, 0.0)) for i in order}
                named = _title_ranked(q, order, rows)
                fused = dict(score_sum(order, [closest, bm25_score, named]))
            order = list(fused)
        size = len(self.index) if self.index is not None else 0
        t = time.perf_counter()
        question = weigh(self.chunks, q, size)
        timings["words"] = (time.perf_counter() - t) * 1000
        quoted = [i for i in order if quotes(question, rows[i].content)]
        if quoted:  # the question pasted from a passage: that passage first
            first = set(quoted)
            order = quoted + [i for i in order if i not in first]
        pool, order = order, order[: opts.candidates]
        similarities(order)
        if opts.sentences:
            sentence_sim.update(_closest_sentences(
                [i for i in order if i not in sentence_sim], rows, qvec))  # fmt: skip
        # The gate asks whether anything is close enough: the closest passage of all the
        # candidates, wherever fusion ranked it
        closest_id = max((i for i in pool if i in dense_sim), key=dense_sim.get, default=None)
        best = dense_sim[closest_id] if closest_id is not None else None

        rerank: dict[int, float] = {}
        if opts.rerank and order:
            if not opts.rerank_model:
                raise SearchError("rerank is on but no cross-encoder model is set (--rerank-model)")
            t = time.perf_counter()
            scores = rerank_scores(opts.rerank_model, q, [rows[i].text for i in order])
            rerank = dict(zip(order, scores, strict=True))
            order.sort(key=lambda i: -rerank[i])
            timings["rerank"] = (time.perf_counter() - t) * 1000

        evidence = [
            weigh_candidate(question, rows[i].content, dense_sim.get(i), sentence_sim.get(i),
                            i in bm25_score)
            for i in order
        ]  # fmt: skip
        if parsed.phrases and _phrases_ask(question, parsed):  # each holds the phrases
            # asked for, and they are what the question asks: its own words
            evidence = [replace(e, phrase=True) for e in evidence]
        unknown_share = question.unknown_share if not trusted else 0.0
        gated = apply_gate(evidence, opts.min_dense, opts.weak_dense, opts.top_k,
                           trusted=trusted, unknown_share=unknown_share, best=best)  # fmt: skip

        def hit(rank: int, cid: int, weak: bool, reason: str = "") -> Hit:
            r = rows[cid]
            scores: dict[str, float | None] = {
                "dense": dense_sim.get(cid),
                "bm25": bm25_score.get(cid),
                "sentence": sentence_sim.get(cid),
                "fused": fused.get(cid),
            }
            if opts.rerank:
                scores["rerank"] = rerank.get(cid)
            return Hit(rank, cid, r.doc_id, r.path, r.name, r.title or r.name, r.kind,
                       r.section, r.char_from, r.char_to, r.page_from, r.page_to, r.content,
                       scores, weak, r.locator, r.symbol, r.line_from, r.line_to,
                       reason)  # fmt: skip

        hits = [
            hit(rank, order[pos], weak, why(evidence[pos], opts.weak_dense, weak))
            for rank, (pos, weak) in enumerate(gated.kept, 1)
        ]
        timings["total"] = (time.perf_counter() - t0) * 1000
        closest = None
        if gated.state == "no_answer" and closest_id is not None:
            closest = hit(0, closest_id, True)
        unknown = question.unknown if not trusted else []
        return SearchResult(
            typed, gated.state, channel, hits, gated.dropped, best, opts.min_dense, opts.weak_dense,
            timings, closest, unknown_words=unknown, narrowed=_narrowed(scope, parsed),
            unknown_share=round(unknown_share, 4), evidence=evidence if opts.explain else None,
            literal=gated.literal,
        )  # fmt: skip
