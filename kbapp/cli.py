"""The command line: a thin layer over Library. Errors become one clean line and exit 1."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sqlite3
import sys
from pathlib import Path

from . import __version__
from .cite import by_document
from .config import SearchOptions, add_flags, flag_values, make_scope
from .errors import KbError
from .kinds import KIND_NAMES
from .logs import log_to_console, log_to_file
from .report import (
    ProgressPrinter,
    dump_json,
    gate_json,
    gate_line,
    print_result,
    print_status,
    result_json,
    status_json,
)  # fmt: skip
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


def _open(a: argparse.Namespace):
    """Only `index` makes a library where there is none; every other command on a path
    that holds no library says so and leaves nothing behind."""
    from .library import Library

    extra = {"backend": a.backend} if a.backend else {}
    return Library.open(a.library, model=a.model, create=a.command == "index", **extra)



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
            progress = lib.index([Path(p) for p in a.paths] or None, progress=ProgressPrinter())
            if sys.stderr.isatty():
                print(file=sys.stderr)
            print(
                f"{progress.indexed} indexed, {progress.failed} failed, "
                f"{progress.unsupported} unsupported, {progress.unchanged} unchanged, "
                f"{progress.removed} removed; {count(progress.chunks, 'passage')} written",
                file=sys.stderr,
            )
            if spent := progress.time_spent():
                print(spent, file=sys.stderr)
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
                print_result(result)
        elif cmd == "context":
            prompt, _ = lib.context(a.query, **_overrides(a))
            print(prompt)
        elif cmd == "status":
            status = lib.status()
            if a.json:
                print(dump_json({**status_json(status), "gate": gate_json(lib)}))
            else:
                print_status(status)
                print(gate_line(lib))
        elif cmd == "settings":
            changes = {k: getattr(a, k) for k in lib.SEARCH_KEYS}
            if a.reset or any(v is not None for v in changes.values()):
                base = lib.settings.search if a.reset else lib.search_defaults
                lib.save_search_settings(base.with_overrides(**changes), wait=True)
            opts = lib.search_defaults
            shown = {k: getattr(opts, k) for k in lib.SEARCH_KEYS}
            if a.json:
                print(dump_json({**shown, "gate": gate_json(lib)}))
            else:
                for k, v in shown.items():
                    print(f"{k:<11} {'(calibration)' if v is None else v}")
                print(gate_line(lib))
        elif cmd == "calibrate":
            cal = lib.calibrate()
            if a.json:
                print(dump_json(gate_json(lib)))
            elif cal is None:
                print("too few passages to calibrate yet: the default floor stays in use")
            else:
                print(gate_line(lib))
        elif cmd == "retry":
            progress = lib.retry(a.path, progress=ProgressPrinter())
            print(f"\n{progress.indexed} indexed, {progress.failed} still failed", file=sys.stderr)
        elif cmd == "check":
            report = lib.check()
            print(report.describe())
            return 0 if report.ok else 1
        elif cmd == "rebuild":
            progress = lib.rebuild(progress=ProgressPrinter())
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
