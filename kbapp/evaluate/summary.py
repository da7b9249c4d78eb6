"""What `kbapp eval` reports from one run's per-query rows: recall and MRR with intervals,
page and document hits, the gate three ways (self-calibrated, the old fixed floor, the
oracle single floor), latency; paired sign tests between two configurations; the table."""

from __future__ import annotations

from dataclasses import asdict

from . import metrics as M


def _floors() -> list[float]:
    """The single floors the sweep tries."""
    return [round(0.20 + 0.025 * i, 3) for i in range(21)]


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

    return {"self_calibrated": at(calibrated, shipped), "fixed_0.42": at(FIXED_FLOOR),
            "oracle_5pct": at(oracle_floor(pos_top))}  # fmt: skip


def oracle_floor(pos_top: list[float]) -> float | None:
    """The highest single floor (on a 0.001 grid) that refuses at most 5% of these
    answerable questions' closest similarities, fitted on them: the oracle."""
    grid = [i / 1000 for i in range(100, 801)]
    ok = [f for f in grid if sum(1 for x in pos_top if x < f) <= 0.05 * len(pos_top)]
    return max(ok) if ok else None


def summarise(run: dict) -> dict:
    cfg = run["config"]  # runner.EvalConfig
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
