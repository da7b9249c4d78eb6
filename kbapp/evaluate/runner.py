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

from ..config import REMOTE_SCHEME, ChunkOptions, SearchOptions, add_flags, load_settings, settable
from ..errors import KbError
from ..search.gate import apply_gate, required_floor
from . import metrics as M
from .summary import compare, summarise, table

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

    def __init__(self, corpus: Path, root: Path | str | None, encoder=None) -> None:
        """`root`: a folder, or a team library's address (one configuration only)."""
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
        if isinstance(base, str):
            if self.libs:
                raise KbError("a team library holds one chunking configuration; evaluate the "
                              "others in a local library (--library FOLDER)")
            path: Path | str = base
        else:
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
                           closest=result.closest_evidence)  # fmt: skip
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
            # the question's words the closest passage holds: none, and under the weak mark
            # its similarity alone does not answer (gate.similar)
            "closest_words": list(result.closest_evidence.matched)
            if result.closest_evidence is not None else [],
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
    place = a.library if a.library and str(a.library).startswith(REMOTE_SCHEME) else (
        Path(a.library).resolve() if a.library else None)  # fmt: skip
    libs = _Libraries(a.corpus.resolve(), place)
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
