"""`kbapp eval`: index a corpus, run a golden file, report recall with intervals and the gate.

A hit is a returned chunk whose `content` contains the needle whole (whitespace-normalised,
the same for every configuration). Rankings are measured with the gate off; the gate is
then applied to the same ranked list with the configured thresholds.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..config import ChunkOptions, SearchOptions, add_flags, load_settings, settable
from ..errors import KbError
from ..search.gate import apply_gate, required_floor
from . import metrics as M

PRESETS: dict[str, dict[str, object]] = {
    "default": {},
    "dense": {"mode": "dense"},
    "bm25": {"mode": "bm25"},
    "hybrid": {"mode": "hybrid"},
    "auto-dense": {"mode": "auto", "prose_mode": "dense"},
    "auto-hybrid": {"mode": "auto", "prose_mode": "hybrid"},
    "blind": {"blind": True},
    "noheader": {"header": False},
    "overlap": {"overlap": 64},
    "rerank": {"rerank": True},
    "balanced": {"balanced": True},
    "rrf": {"fusion": "rrf"},
    "nosentences": {"sentences": False},
    "torch": {"backend": "torch"},
    "onnx-fp32": {"backend": "onnx-fp32"},
    "onnx-int8": {"backend": "onnx-int8"},
}
_CHUNK_KEYS = settable(ChunkOptions)
_SEARCH_KEYS = settable(SearchOptions)


@dataclass(frozen=True)
class EvalConfig:
    name: str
    chunk: ChunkOptions
    search: SearchOptions
    backend: str | None = None  # None: the default backend


def _coerce(kind: type, raw: object) -> object:
    if kind is bool and isinstance(raw, str):
        return raw.lower() in ("1", "true", "on", "yes")
    return kind(raw)


def parse_config(spec: str, base: EvalConfig) -> EvalConfig:
    """A preset name, `key=value,...`, or both: `hybrid,target=400`."""
    chunk, search = asdict(base.chunk), asdict(base.search)
    backend = base.backend
    for part in filter(None, (s.strip() for s in spec.split(","))):
        if "=" not in part:
            if part not in PRESETS:
                raise KbError(f"unknown configuration {part!r}; presets: {', '.join(PRESETS)}")
            items = PRESETS[part].items()
        else:
            key, _, raw = part.partition("=")
            items = [(key.strip().replace("-", "_"), raw.strip())]
        for key, raw in items:
            if key == "backend":
                backend = str(raw)
            elif key in _CHUNK_KEYS:
                chunk[key] = _coerce(_CHUNK_KEYS[key], raw)
            elif key in _SEARCH_KEYS:
                search[key] = _coerce(_SEARCH_KEYS[key], raw)
            else:
                raise KbError(f"unknown configuration key {key!r}")
    return EvalConfig(spec, ChunkOptions(**chunk), SearchOptions(**search), backend)


def load_golden(path: Path) -> list[dict]:
    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise KbError(f"cannot read the golden file {path}: {exc.strerror or exc}") from exc
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            row["id"], row["query"]  # noqa: B018 - validates the required keys
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise KbError(f"{path}:{n}: not a golden row ({exc})") from exc
        out.append(row)
    return out


class _Libraries:
    """One indexed library per chunking configuration, reused across search configurations."""

    def __init__(self, corpus: Path, root: Path | None, encoder=None) -> None:
        self.corpus = corpus
        self.root = root
        self.encoder = encoder
        self.tmp: tempfile.TemporaryDirectory | None = None
        self.libs: dict[str, tuple[object, dict]] = {}

    def get(self, chunk: ChunkOptions, backend: str | None = None):
        from ..library import Library

        key = chunk.signature + (f"-{backend}" if backend else "")
        if key in self.libs:
            return self.libs[key]
        if self.root is None:
            self.tmp = self.tmp or tempfile.TemporaryDirectory(prefix="kbapp-eval-")
            base = Path(self.tmp.name)
        else:
            base = self.root
        path = base if not self.libs and self.root is not None else base / key
        settings = replace(load_settings(path), chunk=chunk, backend=backend)
        lib = Library(settings, self.encoder)
        started = time.perf_counter()
        progress = lib.index([self.corpus])
        seconds = time.perf_counter() - started
        docs, chunks, split, head, total = lib.store.documents.totals()
        info = {
            "documents": docs, "chunks": chunks or 0, "seconds": round(seconds, 2) if progress.indexed else None,  # None: reused
            "indexed_now": progress.indexed, "failed": progress.failed,
            "split_for_window": split or 0,
            "header_token_share": round((head or 0) / total, 4) if total else 0.0,
        }  # fmt: skip
        self.libs[key] = (lib, info)
        return self.libs[key]

    def close(self) -> None:
        for lib, _ in self.libs.values():
            lib.close()
        if self.tmp:
            self.tmp.cleanup()


def _floors() -> list[float]:
    return [round(0.20 + 0.025 * i, 3) for i in range(21)]


def evaluate(libs: _Libraries, golden: list[dict], cfg: EvalConfig) -> dict:
    lib, info = libs.get(cfg.chunk, cfg.backend)
    opts, source = lib.gate_options(cfg.search)  # unset thresholds: the library's calibration
    # One search per question with the gate open and every candidate shown (ranks), whose
    # evidence the real gate then decides on, exactly as a search with the thresholds would
    probe = replace(opts, top_k=max(opts.candidates, max(M.KS)),
                    candidates=max(opts.candidates, max(M.KS)), min_dense=-1.0,
                    weak_dense=-1.0, explain=True)  # fmt: skip
    all_contents = lib.store.chunks.all_contents()
    rows = []
    for g in golden:
        result = lib.search(g["query"], probe)
        shown = [h.content for h in result.hits]
        contents = shown[: max(M.KS)]
        evidence = result.evidence or []
        gated = apply_gate(evidence[: opts.candidates], opts.min_dense, opts.weak_dense,
                           opts.top_k, trusted=result.channel == "bm25",
                           unknown_share=result.unknown_share,
                           best=result.best_dense)  # fmt: skip
        needle = g.get("needle")
        doc_rank, page_rank = _doc_page_ranks(g, result.hits[: max(M.KS)])
        rows.append({
            "id": g["id"],
            "positive": needle is not None,
            "rank": M.first_hit_rank(needle, contents) if needle else None,
            "paged": bool(g.get("doc") and g.get("pages")),
            "doc_rank": doc_rank,
            "page_rank": page_rank,
            "destroyed": bool(needle) and not any(M.is_hit(needle, c) for c in all_contents),
            "top_dense": result.best_dense,
            "state": gated.state,
            "answered_hit": bool(needle)
            and any(M.is_hit(needle, shown[i]) for i, _ in gated.kept),
            "literal": gated.literal,
            # the decision's features, so a miss can be read
            "required": round(required_floor(opts.min_dense, result.unknown_share), 4),
            "unknown_words": result.unknown_words,
            "top_sentence": max((e.sentence for e in evidence if e.sentence is not None),
                                default=None),
            "top_coverage": round(max((e.coverage for e in evidence), default=0.0), 3),
            "quoted": any(e.phrase for e in evidence),
            "channel": result.channel,
            "ms": result.timings_ms.get("total", 0.0),
            "quote_chars": [len(shown[i]) for i, _ in gated.kept] if gated.kept else [],
        })  # fmt: skip
    gate = {"floor": opts.min_dense, "weak": opts.weak_dense, "source": source}
    cal = lib.calibration
    return {"config": cfg, "index": info, "rows": rows, "gate": gate,
            "calibrated_floor": cal.floor if cal is not None else None,
            "gate_is_calibrated": source == "calibrated"}  # fmt: skip


def _doc_page_ranks(g: dict, hits) -> tuple[int | None, int | None]:
    """Where a golden row names its document ("doc": the file name or its stem) and evidence
    pages ("pages"), the 1-based rank of the first hit from that document, and of the first
    hit from it whose pages include an evidence page."""
    doc = g.get("doc")
    if not doc or not g.get("pages"):
        return None, None
    pages = set(g["pages"])
    doc_rank = page_rank = None
    for rank, h in enumerate(hits, start=1):
        if doc not in (h.name, Path(h.name).stem):
            continue
        doc_rank = doc_rank or rank
        lo = h.page_from or 0
        if page_rank is None and any(lo <= p <= (h.page_to or lo) for p in pages):
            page_rank = rank
    return doc_rank, page_rank


FIXED_FLOOR = 0.42  # the one floor kbapp shipped before it calibrated itself


def gate_three_ways(pos_top: list[float], neg_top: list[float], calibrated: float | None,
                    shipped: tuple[list[bool], list[bool]] | None = None) -> dict:  # fmt: skip
    """Abstain on negatives and false refusal on positives (Wilson 95%) with the library's
    self-calibrated gate, at the old fixed floor, and at the oracle: the highest single floor
    that refuses at most 5% of this set's positives, fitted on the set itself. `shipped`:
    what the gate decided (refused, per positive and per negative), which also raises the
    floor for words the library never uses; without it, the calibrated floor alone."""

    def at(floor: float | None, decided: tuple[list[bool], list[bool]] | None = None) -> dict | None:
        if floor is None:
            return None
        if decided is not None:
            fr, ab = sum(decided[0]), sum(decided[1])
        else:
            fr = sum(1 for x in pos_top if x < floor)
            ab = sum(1 for x in neg_top if x < floor)
        return {
            "floor": round(floor, 4),
            "abstain": _r(ab / len(neg_top)) if neg_top else None,
            "abstain_ci": [_r(x) for x in M.wilson(ab, len(neg_top))],
            "false_refusal": _r(fr / len(pos_top)) if pos_top else None,
            "false_refusal_ci": [_r(x) for x in M.wilson(fr, len(pos_top))],
        }

    grid = [i / 1000 for i in range(100, 801)]
    ok = [f for f in grid if sum(1 for x in pos_top if x < f) <= 0.05 * len(pos_top)]
    return {"self_calibrated": at(calibrated, shipped), "fixed_0.42": at(FIXED_FLOOR),
            "oracle_5pct": at(max(ok) if ok else None)}  # fmt: skip


def summarise(run: dict) -> dict:
    cfg: EvalConfig = run["config"]
    rows = run["rows"]
    pos = [r for r in rows if r["positive"]]
    neg = [r for r in rows if not r["positive"]]
    ranks = [r["rank"] for r in pos]
    n = len(pos)
    recall, recall_ci = {}, {}
    for k in M.KS:
        hits = sum(1 for r in ranks if r is not None and r <= k)
        recall[str(k)] = round(hits / n, 4) if n else None
        recall_ci[str(k)] = [round(x, 4) for x in M.wilson(hits, n)]
    pos_top = [r["top_dense"] for r in pos if r["top_dense"] is not None]
    neg_top = [r["top_dense"] for r in neg if r["top_dense"] is not None]
    sweep = [
        {
            "floor": f,
            "abstain_rate": round(sum(1 for x in neg_top if x < f) / len(neg_top), 4)
            if neg_top
            else None,
            "false_refusal_rate": round(sum(1 for x in pos_top if x < f) / len(pos_top), 4)
            if pos_top
            else None,
        }  # fmt: skip
        for f in _floors()
    ]
    quotes = [q for r in pos for q in r["quote_chars"]]
    paged = [r for r in pos if r.get("paged")]
    lat = [r["ms"] for r in rows]
    by_channel: dict[str, list[float]] = {}
    for r in rows:
        by_channel.setdefault(r["channel"], []).append(r["ms"])
    return {
        "config": {"name": cfg.name, "chunk": asdict(cfg.chunk), "search": asdict(cfg.search)},
        "positives": n,
        "negatives": len(neg),
        "recall": recall,
        "recall_ci": recall_ci,
        "mrr": round(M.mrr(ranks), 4),
        **({"page_hit": _hit_at(paged, "page_rank"), "doc_hit": _hit_at(paged, "doc_rank"),
            "paged_questions": len(paged)} if paged else {}),
        "destroyed": sum(1 for r in pos if r["destroyed"]),
        "gate": {
            **run.get("gate", {"floor": cfg.search.min_dense, "weak": cfg.search.weak_dense}),
            "abstain_rate": _rate(neg, lambda r: r["state"] == "no_answer"),
            "negative_weak_rate": _rate(neg, lambda r: r["state"] == "weak"),
            "false_weak_rate": _rate(pos, lambda r: r["state"] == "weak"),
            "false_refusal_rate": _rate(pos, lambda r: r["state"] == "no_answer"),
            "answered_recall": _rate(pos, lambda r: r["answered_hit"]),
        },
        "gate_three_ways": gate_three_ways(
            pos_top, neg_top, run.get("calibrated_floor"),
            ([r["state"] == "no_answer" for r in pos if r["top_dense"] is not None],
             [r["state"] == "no_answer" for r in neg if r["top_dense"] is not None])
            if run.get("gate_is_calibrated") else None,
        ),  # fmt: skip
        "calibration": {
            "positive_min_top_dense": _r(min(pos_top, default=None)),
            "positive_median_top_dense": _r(M.median(pos_top)),
            "negative_median_top_dense": _r(M.median(neg_top)),
            "negative_max_top_dense": _r(max(neg_top, default=None)),
            "sweep": sweep,
        },
        "latency_ms": {
            "p50": _r(M.percentile(lat, 0.5), 2),
            "p95": _r(M.percentile(lat, 0.95), 2),
            "per_channel": {
                ch: {
                    "p50": _r(M.percentile(v, 0.5), 2),
                    "p95": _r(M.percentile(v, 0.95), 2),
                    "queries": len(v),
                }  # fmt: skip
                for ch, v in by_channel.items()
            },
        },
        "index": run["index"],
        "quote_chars": {
            "mean": _r(sum(quotes) / len(quotes), 1) if quotes else None,
            "median": _r(M.median(quotes), 1),
        },  # fmt: skip
    }


def _hit_at(rows: list[dict], key: str) -> dict[str, float]:
    """Share of rows whose rank under `key` is within k, for each reported k."""
    return {str(k): round(sum(1 for r in rows if r[key] is not None and r[key] <= k) / len(rows), 4)
            for k in M.KS}  # fmt: skip


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(x, nd)


def _rate(rows: list[dict], pred) -> float | None:
    return round(sum(1 for r in rows if pred(r)) / len(rows), 4) if rows else None


def compare(a: dict, b: dict) -> dict:
    """Paired two-sided exact sign tests of A against B on the same positives."""
    ra = [r["rank"] for r in a["rows"] if r["positive"]]
    rb = [r["rank"] for r in b["rows"] if r["positive"]]
    out = {}
    for k in (1, 4, 8, 20):
        hit = lambda r, k=k: 1.0 if r is not None and r <= k else 0.0  # noqa: E731
        out[f"R@{k}"] = M.paired([hit(r) for r in ra], [hit(r) for r in rb])
    rr = lambda r: 1.0 / r if r is not None else 0.0  # noqa: E731
    out["RR"] = M.paired([rr(r) for r in ra], [rr(r) for r in rb])
    return out


def table(s: dict) -> str:
    rec = s["recall"]
    ci = s["recall_ci"]
    g = s["gate"]
    c = s["calibration"]
    seconds = s["index"]["seconds"]
    took = f"in {seconds} s" if seconds is not None else "(library reused)"
    lines = [
        f"configuration: {s['config']['name']}   ({s['positives']} positives, {s['negatives']} negatives)",
        "  "
        + "  ".join(f"R@{k} {rec[k]:.3f} [{ci[k][0]:.3f},{ci[k][1]:.3f}]" for k in ("1", "4", "8")),
        "  "
        + "  ".join(f"R@{k} {rec[k]:.3f} [{ci[k][0]:.3f},{ci[k][1]:.3f}]" for k in ("20", "40")),
        f"  MRR {s['mrr']:.3f}   destroyed answers {s['destroyed']}   "
        f"quote chars mean {s['quote_chars']['mean']} median {s['quote_chars']['median']}",
        *(["  page-hit@1/4/8 " + " / ".join(f"{s['page_hit'][k]:.3f}" for k in ("1", "4", "8"))
           + "   doc-hit@1/4/8 " + " / ".join(f"{s['doc_hit'][k]:.3f}" for k in ("1", "4", "8"))
           + f"   ({s['paged_questions']} questions with evidence pages)"]
          if "page_hit" in s else []),
        f"  gate floor {g['floor']} weak {g['weak']}: abstain {g['abstain_rate']} on negatives, "
        f"false refusal {g['false_refusal_rate']}, false weak {g['false_weak_rate']} on positives",
        "  gate three ways (abstain / false refusal): " + "; ".join(
            f"{name} {w['floor']}: {w['abstain']} / {w['false_refusal']}"
            for name, w in s["gate_three_ways"].items() if w is not None),
        f"  top dense: positives min {c['positive_min_top_dense']} median "
        f"{c['positive_median_top_dense']}; negatives median {c['negative_median_top_dense']} "
        f"max {c['negative_max_top_dense']}",
        f"  latency p50 {s['latency_ms']['p50']} ms p95 {s['latency_ms']['p95']} ms   index: "
        f"{s['index']['chunks']} chunks {took}, "
        f"{s['index']['split_for_window']} split for the window, header share "
        f"{s['index']['header_token_share']}",
    ]
    return "\n".join(lines)


def add_eval_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("corpus", type=Path, help="folder of documents")
    p.add_argument("golden", type=Path, help="JSONL: {id, query, needle, doc} / needle null")
    p.add_argument("--config", default="default",
                   help="preset or key=value list, e.g. 'hybrid' or 'mode=dense,target=400'")  # fmt: skip
    p.add_argument("--compare", nargs=2, metavar=("A", "B"), help="two configurations, paired")
    add_flags(p.add_argument_group("search options"), SearchOptions)
    add_flags(p.add_argument_group("chunking options"), ChunkOptions)
    p.add_argument("--json", dest="json_out", type=Path, help="write the report here")
    p.add_argument("--per-query", action="store_true", help="include per-query rows in the JSON")


def _base_config(a: argparse.Namespace) -> EvalConfig:
    settings = load_settings(None)
    parts = []
    for key in (*_SEARCH_KEYS, *_CHUNK_KEYS):
        v = getattr(a, key, None)
        if v is not None:
            parts.append(f"{key}={v}")
    base = EvalConfig("base", settings.chunk, settings.search)
    return parse_config(",".join(parts), base) if parts else base


def run_eval_command(a: argparse.Namespace) -> int:
    if not a.corpus.is_dir():
        raise KbError(f"{a.corpus} is not a folder")
    golden = load_golden(a.golden)
    if not golden:
        raise KbError(f"{a.golden} has no queries")
    base = _base_config(a)
    libs = _Libraries(a.corpus.resolve(), Path(a.library).resolve() if a.library else None)
    try:
        names = a.compare or [a.config]
        runs = []
        for name in names:
            cfg = parse_config(name, base)
            cfg = replace(cfg, name=name)
            print(f"evaluating {name} ...", file=sys.stderr, flush=True)
            runs.append(evaluate(libs, golden, cfg))
        summaries = [summarise(r) for r in runs]
        for s in summaries:
            print(table(s))
            print()
        report: dict = summaries[0] if len(summaries) == 1 else {"configs": summaries}
        if a.compare:
            cmp = compare(runs[0], runs[1])
            report["compare"] = {"a": names[0], "b": names[1], **cmp}
            print(
                f"paired sign test, {names[0]} vs {names[1]} (wins/losses on disagreeing queries):"
            )
            for metric, v in cmp.items():
                print(f"  {metric:<5} +{v['wins']}/-{v['losses']}  p = {v['p']:.4g}")
        if a.per_query:
            report["per_query"] = [
                {"config": r["config"].name, **{k: v for k, v in row.items()}}
                for r in runs
                for row in r["rows"]
            ]
        if a.json_out:
            a.json_out.write_text(json.dumps(report, indent=2))
            print(f"report written to {a.json_out}", file=sys.stderr)
    finally:
        libs.close()
    return 0
