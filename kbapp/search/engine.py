"""One search request from query to gated, scored hits."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace

import numpy as np

from ..config import Scope, SearchOptions
from ..embed import Encoder
from ..errors import SearchError
from ..paths import printable
from ..store.chunks import Chunks, Passage
from ..store.vectors import VectorIndex
from . import bm25
from .evidence import KEYWORD_SHARE, Question, quotes, weigh, weigh_candidate, why
from .fuse import rrf, score_sum
from .gate import apply_gate
from .named import title_ranked
from .query import Parsed, parse_query
from .rerank import rerank_scores
from .result import Hit, SearchResult
from .route import looks_like_symbol, route

MAX_QUERY_CHARS = 2000
# BM25 runs beside the query's embedding and the ANN lookup: SQLite, ONNX Runtime and
# hnswlib all release the GIL, so on a big library a hybrid search costs about its slower
# channel instead of the sum of both (docs/EVALUATION.md, search at 84k real passages).
_CHANNELS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kbapp-bm25")


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
        search to some documents; "phrases" and -words in the query narrow the passages.
        The steps, in order, each filling in the run: retrieve (both channels), candidates
        (their rows, narrowed by the query's phrases and -words), fuse (hybrid), weigh (the
        question's words; a quoted passage first), rerank (on request), gate."""
        run = self._start(query, opts, scope)
        self._retrieve(run)
        self._candidates(run)
        if run.channel == "hybrid":
            self._fuse(run)
        question, best, closest_id = self._weigh(run)
        self._rerank(run)
        return self._gate(run, question, best, closest_id)

    def _start(self, query: str, opts: SearchOptions, scope: Scope | None) -> _Run:
        typed = clean_query(query)
        parsed = parse_query(typed)
        if scope is not None and scope.everything:
            scope = None
        within = self.chunks.scoped_ids(self.model, scope) if scope is not None else None
        if within is not None and not within:
            raise SearchError(f"no indexed document is {scope.describe()}")
        channel = route(parsed.text, opts.mode, opts.prose_mode)
        return _Run(typed, parsed, opts, scope, within, channel, looks_like_symbol(parsed.text),
                    channel == "bm25", time.perf_counter())  # fmt: skip

    def _retrieve(self, run: _Run) -> None:
        """BM25 in a thread beside the query's embedding and the ANN lookup."""
        q, opts = run.q, run.opts
        lexical_job = None
        if run.channel in ("bm25", "hybrid"):
            lexical_job = _CHANNELS.submit(self._bm25, q, opts.candidates * 2, run.symbol,
                                           run.scope, run.parsed)  # fmt: skip
        if not (run.trusted and run.symbol):
            if self.encoder is None:
                raise SearchError("the embedding model is not loaded yet; try again in a moment")
            t = time.perf_counter()
            run.qvec = self.encoder.encode([q])[0]
            run.timings["embed"] = (time.perf_counter() - t) * 1000
        if run.channel in ("dense", "hybrid") and self.index is not None and run.qvec is not None:
            t = time.perf_counter()
            run.dense = self.index.query(run.qvec, opts.candidates, run.within)
            run.timings["dense"] = (time.perf_counter() - t) * 1000
        if lexical_job is not None:
            run.lexical, run.timings["bm25"] = lexical_job.result()

    def _candidates(self, run: _Run) -> None:
        """Both channels' candidates in one order, with their rows; a passage the query's
        phrases or -words rule out leaves every list."""
        run.dense_sim = dict(run.dense)
        run.bm25_score = dict(run.lexical)
        if run.channel == "dense":
            order = [i for i, _ in run.dense]
        elif run.channel == "bm25":
            order = [i for i, _ in run.lexical]
        else:
            order = list(dict.fromkeys([*(i for i, _ in run.dense), *(i for i, _ in run.lexical)]))
        rows = run.rows = self.chunks.rows(order, self.model)
        parsed = run.parsed
        run.order = [i for i in order if i in rows and parsed.admits(rows[i].content)]
        if parsed.narrowed:
            run.dense = [(i, d) for i, d in run.dense if i in rows and parsed.admits(rows[i].content)]
            run.lexical = [(i, b) for i, b in run.lexical
                           if i in rows and parsed.admits(rows[i].content)]  # fmt: skip

    def _fuse(self, run: _Run) -> None:
        """The searchable candidates of both channels, fused with a third signal: the
        candidates of the document the question names."""
        opts, rows, order = run.opts, run.rows, run.order
        ranked = [[i for i, _ in run.dense if i in rows], [i for i, _ in run.lexical if i in rows]]
        if opts.fusion == "rrf":
            fused = dict(rrf(ranked, k=opts.rrf_k))
            named = title_ranked(run.q, list(fused), rows)
            if named:
                fused = dict(rrf([*ranked, list(named)], k=opts.rrf_k))
        else:  # score fusion needs every candidate's similarity, not only the top's;
            # a passage is as close as its closest sentence (the gate keeps the passage's)
            run.similarities(order)
            if opts.sentences:
                run.sentence_sim.update(_closest_sentences(order, rows, run.qvec))
            closest = {i: max(run.dense_sim.get(i, 0.0), run.sentence_sim.get(i, 0.0))
                       for i in order}  # fmt: skip
            named = title_ranked(run.q, order, rows)
            fused = dict(score_sum(order, [closest, run.bm25_score, named]))
        run.fused = fused
        run.order = list(fused)

    def _weigh(self, run: _Run) -> tuple[Question, float | None, int | None]:
        """The question's words as this library knows them; a passage that holds the
        question word for word goes first; the candidates are cut to size and get their
        similarities. Returns the question and the closest passage of all the candidates
        (its similarity and id), wherever fusion ranked it: what the gate asks about."""
        opts, rows = run.opts, run.rows
        size = len(self.index) if self.index is not None else 0
        t = time.perf_counter()
        question = weigh(self.chunks, run.q, size)
        run.timings["words"] = (time.perf_counter() - t) * 1000
        order = run.order
        quoted = [i for i in order if quotes(question, rows[i].content)]
        if quoted:  # the question pasted from a passage: that passage first
            first = set(quoted)
            order = quoted + [i for i in order if i not in first]
        pool, order = order, order[: opts.candidates]
        run.order = order
        run.similarities(order)
        if opts.sentences:
            run.sentence_sim.update(_closest_sentences(
                [i for i in order if i not in run.sentence_sim], rows, run.qvec))  # fmt: skip
        dense_sim = run.dense_sim
        closest_id = max((i for i in pool if i in dense_sim), key=dense_sim.get, default=None)
        best = dense_sim[closest_id] if closest_id is not None else None
        return question, best, closest_id

    def _rerank(self, run: _Run) -> None:
        opts = run.opts
        if not (opts.rerank and run.order):
            return
        if not opts.rerank_model:
            raise SearchError("rerank is on but no cross-encoder model is set (--rerank-model)")
        t = time.perf_counter()
        scores = rerank_scores(opts.rerank_model, run.q, [run.rows[i].text for i in run.order])
        run.rerank = dict(zip(run.order, scores, strict=True))
        run.order.sort(key=lambda i: -run.rerank[i])
        run.timings["rerank"] = (time.perf_counter() - t) * 1000

    def _gate(self, run: _Run, question: Question, best: float | None,
              closest_id: int | None) -> SearchResult:  # fmt: skip
        """Each candidate's evidence, the gate's decision, and the hits it keeps."""
        opts, rows, order, parsed = run.opts, run.rows, run.order, run.parsed
        evidence = [
            weigh_candidate(question, rows[i].said, run.dense_sim.get(i),
                            run.sentence_sim.get(i), i in run.bm25_score)
            for i in order
        ]  # fmt: skip
        if parsed.phrases and _phrases_ask(question, parsed):  # each holds the phrases
            # asked for, and they are what the question asks: its own words
            evidence = [replace(e, phrase=True) for e in evidence]
        unknown_share = question.unknown_share if not run.trusted else 0.0
        near = None  # the closest passage's evidence, wherever fusion ranked it
        if closest_id is not None:
            near = evidence[order.index(closest_id)] if closest_id in order else weigh_candidate(
                question, rows[closest_id].said, best, run.sentence_sim.get(closest_id),
                closest_id in run.bm25_score)  # fmt: skip
        gated = apply_gate(evidence, opts.min_dense, opts.weak_dense, opts.top_k,
                           trusted=run.trusted, unknown_share=unknown_share, closest=near)  # fmt: skip
        hits = [
            run.hit(rank, order[pos], weak, why(evidence[pos], opts.weak_dense, weak),
                    evidence[pos].matched)
            for rank, (pos, weak) in enumerate(gated.kept, 1)
        ]
        run.timings["total"] = (time.perf_counter() - run.t0) * 1000
        closest = None
        if gated.state == "no_answer" and near is not None:
            closest = run.hit(0, closest_id, True, matched=near.matched)
        unknown = question.unknown if not run.trusted else []
        return SearchResult(
            run.typed, gated.state, run.channel, hits, gated.dropped, best, opts.min_dense,
            opts.weak_dense, run.timings, closest, unknown_words=unknown,
            narrowed=_narrowed(run.scope, parsed), unknown_share=round(unknown_share, 4),
            evidence=evidence if opts.explain else None, literal=gated.literal,
            closest_evidence=near,
        )  # fmt: skip


# A hit's fields that are its row's as they stand (the title falls back to the file name).
_FROM_ROW = tuple(f.name for f in fields(Passage) if f.name != "title")


@dataclass
class _Run:
    """One search as its steps fill it in."""

    typed: str
    parsed: Parsed
    opts: SearchOptions
    scope: Scope | None
    within: set[int] | None
    channel: str
    symbol: bool
    trusted: bool  # BM25 alone: the gate trusts the keyword match
    t0: float
    timings: dict[str, float] = field(default_factory=dict)
    qvec: np.ndarray | None = None
    dense: list[tuple[int, float]] = field(default_factory=list)
    lexical: list[tuple[int, float]] = field(default_factory=list)
    rows: dict = field(default_factory=dict)
    order: list[int] = field(default_factory=list)
    dense_sim: dict[int, float] = field(default_factory=dict)
    sentence_sim: dict[int, float] = field(default_factory=dict)
    bm25_score: dict[int, float] = field(default_factory=dict)
    fused: dict[int, float] = field(default_factory=dict)
    rerank: dict[int, float] = field(default_factory=dict)

    @property
    def q(self) -> str:
        return self.parsed.text

    def similarities(self, ids: list[int]) -> None:
        """The query's cosine to the candidates the ANN lookup did not return."""
        rows = self.rows
        missing = [i for i in ids if i not in self.dense_sim and rows[i].vector is not None]
        if self.qvec is not None and missing:
            mat = np.frombuffer(b"".join(rows[i].vector for i in missing), dtype=np.float32)
            sims = mat.reshape(len(missing), -1) @ self.qvec
            self.dense_sim.update(zip(missing, (float(s) for s in sims), strict=True))

    def hit(self, rank: int, cid: int, weak: bool, reason: str = "",
            matched: tuple[str, ...] = ()) -> Hit:  # fmt: skip
        r = self.rows[cid]
        scores: dict[str, float | None] = {
            "dense": self.dense_sim.get(cid),
            "bm25": self.bm25_score.get(cid),
            "sentence": self.sentence_sim.get(cid),
            "fused": self.fused.get(cid),
        }
        if self.opts.rerank:
            scores["rerank"] = self.rerank.get(cid)
        return Hit(rank=rank, chunk_id=cid, title=r.title or r.name, scores=scores,
                   weak_match=weak, why=reason, matched=matched,
                   reading=None if r.said == r.content else r.said,
                   **{name: getattr(r, name) for name in _FROM_ROW})  # fmt: skip
