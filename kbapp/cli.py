"""The command line: a thin layer over Library. Errors become one clean line and exit 1."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import re
import sqlite3
import sys
import time
from pathlib import Path

from . import __version__
from .cite import address_fields, by_document, cite
from .config import SearchOptions, add_flags, flag_values, make_scope
from .errors import KbError
from .index import Progress
from .kinds import KIND_NAMES, category_of, where_of
from .logs import log_to_console, log_to_file
from .paths import display_path
from .search import SearchResult
from .wording import count

log = logging.getLogger(__name__)


def _search_options(p: argparse.ArgumentParser) -> None:
    add_flags(p.add_argument_group("search options (override the library's defaults)"),
              SearchOptions)  # fmt: skip
    g = p.add_argument_group(
        "where to look (the query itself may hold \"an exact phrase\" and -words to leave out)"
    )
    g.add_argument("--folder", help="only documents under this folder")
    g.add_argument("--kind", help=f"only these kinds, comma-separated: {', '.join(KIND_NAMES)}")
    g.add_argument("--since", help="only files changed since a date (2024-03-01) or 30d, 2w, 6m")


def _overrides(a: argparse.Namespace) -> dict:
    return {**flag_values(a, SearchOptions), "scope": make_scope(a.folder, a.kind, a.since)}


def _global_options(p: argparse.ArgumentParser, default) -> None:
    p.add_argument(
        "--library", default=default, help="library folder (default: your data folder; env KBAPP_LIBRARY)"
    )
    p.add_argument(
        "--model", default=default,
        help="embedding model: a local folder or cached name (env KBAPP_MODEL)",
    )  # fmt: skip
    p.add_argument(
        "--backend", default=default, choices=("torch", "onnx-fp32", "onnx-int8"),
        help="how the model runs: torch, onnx-fp32 or onnx-int8 (env KBAPP_BACKEND; default: "
        "the library's own, onnx-int8 for a new library)",
    )  # fmt: skip
    p.add_argument("-v", "--verbose", action="store_true", default=default or False,
                   help="log more to stderr")  # fmt: skip


class _Sub(argparse.ArgumentParser):
    """A command's parser: also takes the global options, before or after its own."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _global_options(self, argparse.SUPPRESS)  # SUPPRESS: never undo what came first


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kbapp",
        description="A knowledge base that runs on your machine. Without a command, opens the window.",
    )
    p.add_argument("--version", action="version", version=f"kbapp {__version__}")
    _global_options(p, None)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Sub)

    s = sub.add_parser("index", help="index folders or files (and watch them in the app)")
    s.add_argument("paths", nargs="*", help="folders or files; none = every folder of the library")

    s = sub.add_parser("search", help="search and print cited fragments")
    s.add_argument("query", nargs="?", help="the question or keywords (may start with '-')")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.add_argument("--by-document", action="store_true",
                   help="each document's passages together, best document first")  # fmt: skip
    _search_options(s)

    s = sub.add_parser("context", help="print the numbered-sources prompt for a question")
    s.add_argument("query", nargs="?", help="the question (may start with '-')")
    _search_options(s)

    s = sub.add_parser("status", help="every document with its state and reason")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("retry", help="index failed documents again")
    s.add_argument("path", nargs="?", help="one document; none = all failed")

    s = sub.add_parser("show", help="print the text a citation points at")
    s.add_argument("citation", help="PATH#char=A,B, #page=N, #slide=N, #line=A,B or #sheet=S&range=A1:C9")

    s = sub.add_parser(
        "settings", help="show or change this library's search settings (the window's too)"
    )
    add_flags(s, SearchOptions, saved_only=True)
    s.add_argument("--reset", action="store_true",
                   help="back to the defaults; thresholds follow the calibration again")  # fmt: skip
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("calibrate", help="measure this library's no-answer floor again")
    s.add_argument("--json", action="store_true")

    sub.add_parser("check", help="check the library for damage (exit 1 when damaged)")
    sub.add_parser("rebuild", help="read every document again from its file, keeping folders")

    s = sub.add_parser("remove", help="forget a folder; its documents leave the index")
    s.add_argument("folder")

    s = sub.add_parser("eval", help="measure retrieval on a corpus and a golden file")
    from .evaluate.runner import add_eval_arguments

    add_eval_arguments(s)

    s = sub.add_parser("bench", help="measure indexing and query speed (prints JSON)")
    from .evaluate.bench import add_bench_arguments

    add_bench_arguments(s)

    sub.add_parser("gui", help="open the window (the default)")
    return p


class _ProgressPrinter:
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


def _open(a: argparse.Namespace):
    """Only `index` makes a library where there is none; every other command on a path
    that holds no library says so and leaves nothing behind."""
    from .library import Library

    extra = {"backend": a.backend} if a.backend else {}
    return Library.open(a.library, model=a.model, create=a.command == "index", **extra)


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
                "scores": h.scores,
                "weak_match": h.weak_match,
                "why": h.why,
            }
            for h, c in zip(result.hits, cite(result.hits), strict=True)
        ],
    }


def _print_result(result: SearchResult) -> None:
    if result.state == "no_answer":
        print(result.no_answer_message)
        return
    if result.state == "weak":
        print("Only weak matches: nothing is close; read these with care.\n")
    for h, c in zip(result.hits, cite(result.hits), strict=True):
        weak = "  [weak match]" if h.weak_match else ""
        print(f"[{c.index}] {display_path(h.name)} - {c.label} ({c.where})  {c.fragment}  "
              f"({h.why}){weak}")  # fmt: skip
        quote = " ".join(h.content.split())
        print(f"    {quote[:400]}{'…' if len(quote) > 400 else ''}\n")


def _gate_json(lib) -> dict:
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


def _gate_line(lib) -> str:
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


def _status_json(status) -> dict:
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


def _print_status(status) -> None:
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


def run(a: argparse.Namespace) -> int:
    cmd = a.command
    if cmd == "eval":
        from .evaluate.runner import run_eval_command

        return run_eval_command(a)
    if cmd == "bench":
        from .evaluate.bench import run_bench_command

        return run_bench_command(a)
    lib = _open(a)
    try:
        if cmd == "index":
            progress = lib.index([Path(p) for p in a.paths] or None, progress=_ProgressPrinter())
            if sys.stderr.isatty():
                print(file=sys.stderr)
            print(
                f"{progress.indexed} indexed, {progress.failed} failed, "
                f"{progress.unsupported} unsupported, {progress.unchanged} unchanged, "
                f"{progress.removed} removed; {count(progress.chunks, 'passage')} written",
                file=sys.stderr,
            )
            if progress.failed:
                print(
                    "see `kbapp status` for the reasons; `kbapp retry` tries again", file=sys.stderr
                )
        elif cmd == "search":
            result = lib.search(a.query, **_overrides(a))
            if a.by_document:
                result.hits = by_document(result.hits)
            if a.json:
                print(dump_json(result_json(result)))
            else:
                _print_result(result)
        elif cmd == "context":
            prompt, _ = lib.context(a.query, **_overrides(a))
            print(prompt)
        elif cmd == "status":
            status = lib.status()
            if a.json:
                print(dump_json({**_status_json(status), "gate": _gate_json(lib)}))
            else:
                _print_status(status)
                print(_gate_line(lib))
        elif cmd == "settings":
            changes = {k: getattr(a, k) for k in lib.SEARCH_KEYS}
            if a.reset or any(v is not None for v in changes.values()):
                base = lib.settings.search if a.reset else lib.search_defaults
                lib.save_search_settings(base.with_overrides(**changes), wait=True)
            opts = lib.search_defaults
            shown = {k: getattr(opts, k) for k in lib.SEARCH_KEYS}
            if a.json:
                print(dump_json({**shown, "gate": _gate_json(lib)}))
            else:
                for k, v in shown.items():
                    print(f"{k:<11} {'(calibration)' if v is None else v}")
                print(_gate_line(lib))
        elif cmd == "calibrate":
            cal = lib.calibrate()
            if a.json:
                print(dump_json(_gate_json(lib)))
            elif cal is None:
                print("too few passages to calibrate yet: the default floor stays in use")
            else:
                print(_gate_line(lib))
        elif cmd == "retry":
            progress = lib.retry(a.path, progress=_ProgressPrinter())
            print(f"\n{progress.indexed} indexed, {progress.failed} still failed", file=sys.stderr)
        elif cmd == "check":
            report = lib.check()
            print(report.describe())
            return 0 if report.ok else 1
        elif cmd == "rebuild":
            progress = lib.rebuild(progress=_ProgressPrinter())
            print(f"\nrebuilt: {progress.indexed} indexed, {progress.failed} failed", file=sys.stderr)
        elif cmd == "show":
            print(lib.show(a.citation))
        elif cmd == "remove":
            n = lib.remove_folder(a.folder)
            print(f"removed {a.folder}: {count(n, 'document')} left the index", file=sys.stderr)
    finally:
        lib.close()
    return 0


QUERY_COMMANDS = ("search", "context")


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse argv. A query is free text: `kbapp search -wordstem` or `kbapp search "-x y"`
    is a query that starts with '-', not an unknown option (words argparse does not know
    are taken as the query for search and context; every other command rejects them)."""
    a, extra = parser.parse_known_args(argv)
    if a.command in QUERY_COMMANDS and extra:
        if a.query is not None:  # the query came first; what follows is not part of it
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        a.query = " ".join(extra)
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if a.command in QUERY_COMMANDS and a.query is None:
        parser.error(f"{a.command} needs a query")
    return a


def main(argv: list[str]) -> int:
    for stream in (sys.stdout, sys.stderr):  # a file name is never a reason to crash
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    a = parse(parser, argv)
    log_to_file()
    log_to_console(a.verbose)
    if a.command in (None, "gui"):
        from .gui.app import run_app

        return run_app(a.library, a.model, a.backend)
    try:
        return run(a)
    except KbError as exc:
        if getattr(a, "json", False):  # --json prints JSON on every outcome
            print(dump_json({"state": "error", "error": str(exc)}))
        print(f"kbapp: error: {exc}", file=sys.stderr)
        return 1
    except sqlite3.DatabaseError as exc:
        msg = (f"the library database is damaged ({exc}); `kbapp check` says what is wrong "
               "and `kbapp rebuild` reads every document again, keeping your folders")  # fmt: skip
        if getattr(a, "json", False):
            print(dump_json({"state": "error", "error": msg}))
        print(f"kbapp: error: {msg}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("kbapp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `kbapp status | head`: the reader left; not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
