"""What the command line prints: results, the gate, document states and progress, as
lines for a person or as JSON (`--json`), the same fields either way."""

from __future__ import annotations

import json
import re
import sys
import time

from .cite import address_fields, cite
from .index import Progress
from .kinds import category_of, where_of
from .paths import display_path
from .search import SearchResult
from .wording import count


class ProgressPrinter:
    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last = 0.0

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        final = p.done == p.total
        if not final and now - self.last < (0.2 if self.tty else 5.0):
            return
        self.last = now
        line = f"{p.describe()}  [{p.indexed} indexed, {p.failed} failed, {count(p.chunks, 'passage')}]"
        if self.tty:
            print("\r" + line[:120].ljust(120), end="", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)


def result_json(result: SearchResult) -> dict:
    return {
        "query": result.query,
        "state": result.state,
        "channel": result.channel,
        "dropped": result.dropped,
        "best_dense": result.best_dense,
        "best": result.best_dense,
        "floor": result.floor,
        "weak": result.weak,
        "floor_source": result.floor_source,
        "required": result.required,  # the floor raised for words the library never uses
        "unknown_words": result.unknown_words,
        "literal": result.literal,  # answered because the question's words stand in a passage
        "narrowed": result.narrowed,  # the search's limits in words (folder, kind, phrases)
        "reason": result.reason,
        "closest": None if result.closest is None else {
            "document": result.closest.path, "where": where_of(result.closest),
            "similarity": result.best_dense, "content": result.closest.content,
        },
        "results": [
            {
                "rank": h.rank,
                "document": h.path,
                "document_name": h.name,
                "section": h.section,
                "category": category_of(h.kind),
                "locator": c.locator,
                "where": c.where,
                "citation": c.uri,
                **address_fields(h),
                "char_from": h.char_from,
                "char_to": h.char_to,
                "content": h.content,
                **({"reading": h.reading} if h.reading is not None else {}),
                "scores": h.scores,
                "weak_match": h.weak_match,
                "why": h.why,
            }
            for h, c in zip(result.hits, cite(result.hits), strict=True)
        ],
    }


def print_result(result: SearchResult) -> None:
    if result.state == "no_answer":
        print(result.no_answer_message)
        return
    if result.state == "weak":
        print("Only weak matches: nothing is close; read these with care.\n")
    for h, c in zip(result.hits, cite(result.hits), strict=True):
        weak = "  [weak match]" if h.weak_match else ""
        print(f"[{c.index}] {display_path(h.name)} - {c.label} ({c.where})  {c.fragment}  "
              f"({h.why}){weak}")  # fmt: skip
        quote = " ".join(h.shown.split())
        print(f"    {quote[:400]}{'…' if len(quote) > 400 else ''}\n")


def gate_json(lib) -> dict:
    """The gate this library's searches use, and the calibration behind it."""
    opts, source = lib.gate_options(lib.search_defaults)
    cal = lib.calibration
    return {
        "floor": opts.min_dense, "weak": opts.weak_dense, "source": source,
        "calibration": None if cal is None else {
            "floor": cal.floor, "weak": cal.weak, "in_library_probes": cal.in_probes,
            "off_topic_probes": cal.off_probes, "in_library_p05": cal.in_p05,
            "off_topic_p95": cal.off_p95, "expected_abstain": cal.expected_abstain,
            "chunks": cal.chunks, "seconds": cal.seconds, "computed_at": cal.computed_at,
            "model": cal.model,
        },
    }  # fmt: skip


def gate_line(lib) -> str:
    opts, source = lib.gate_options(lib.search_defaults)
    cal = lib.calibration
    line = f"gate:    floor {opts.min_dense:.3f}, weak below {opts.weak_dense:.3f} ({source})"
    if cal is not None:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(cal.computed_at))
        line += (
            f"\n         calibrated {when} on {cal.chunks} passages: {cal.in_probes} in-library "
            f"and {cal.off_probes} off-topic probes; refuses ~{cal.expected_abstain:.0%} of "
            "off-topic questions"
        )
    return line


def status_json(status) -> dict:
    return {
        "library": status.library,
        "model": status.model,
        "documents": [
            {
                "path": d.path,
                "name": d.name,
                "state": d.state,
                "reason": d.reason,
                "warnings": d.warnings,
                "pages": d.pages,
                "ocr_pages": d.ocr_pages,
                "ocr_confidence": d.ocr_confidence,
                "needs_ocr_pages": d.needs_ocr_pages,
                "chunks": d.chunks,
                "split_for_window": d.split_for_window,
                "indexed_at": d.indexed_at,
                "model": d.model,
                "pipeline_version": d.pipeline_version,
                "extractor_version": d.extractor_version,
            }  # fmt: skip
            for d in status.documents
        ],
    }


def print_status(status) -> None:
    print(f"library: {display_path(status.library)}\nmodel:   {status.model}")
    states = ("indexed", "queued", "indexing", "failed", "unsupported", "stale", "skipped")
    print("  ".join(f"{s}: {status.count(s)}" for s in states), f" chunks: {status.chunks}")
    for d in status.documents:
        extra = f"  {count(d.chunks, 'passage')}" if d.chunks is not None else ""
        if d.ocr_pages:
            extra += f", {d.ocr_pages} OCR'd pages (conf {d.ocr_confidence or 0:.0f})"
        print(f"{d.state:<11} {display_path(d.path)}{extra}")
        if d.reason:
            print(f"            reason: {d.reason}")
        for w in d.warnings:
            print(f"            warning: {w}")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dump_json(data: object) -> str:
    """JSON that is always valid UTF-8: a file name's undecodable byte (a lone surrogate
    in Python) is written as its \\uXXXX escape, which JSON readers turn back into it."""
    text = json.dumps(data, ensure_ascii=False, indent=2)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
