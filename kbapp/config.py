"""Settings: defaults, KBAPP_* environment overrides, per-request overrides, and paths.

The search defaults below were chosen by measurement on the public evaluation set;
docs/EVALUATION.md has the tables and the commands that reproduce them.
"""

from __future__ import annotations

import os
import re
import typing
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import platformdirs

from .errors import KbError, SearchError

APP_NAME = "kbapp"
BUNDLED_MODEL = "bundled:all-MiniLM-L6-v2"
MODES = ("auto", "dense", "bm25", "hybrid")
PROSE_MODES = ("dense", "hybrid")
FUSIONS = ("score", "rrf")  # how hybrid search fuses its channels (kbapp.search.fuse)


@dataclass(frozen=True)
class Scope:
    """Which documents one search looks in: under a folder, of some kinds (stored kind
    names, kbapp.kinds.kinds_named), modified since a time. Never saved with settings."""

    folder: str | None = None
    kinds: tuple[str, ...] = ()
    since: float | None = None  # seconds since the epoch, the file's modification time

    @property
    def everything(self) -> bool:
        return self.folder is None and not self.kinds and self.since is None

    def describe(self) -> str:
        from datetime import datetime

        parts = []
        if self.folder is not None:
            parts.append(f"under {self.folder}")
        if self.kinds:
            parts.append(f"of kind {', '.join(self.kinds)}")
        if self.since is not None:
            parts.append(f"changed since {datetime.fromtimestamp(self.since):%Y-%m-%d}")
        return ", ".join(parts) or "anywhere"


_AGO = {"d": 86400, "w": 7 * 86400, "m": 30 * 86400, "y": 365 * 86400}


def since_time(text: str) -> float:
    """`2024-03-01` (a date), or `30d`, `2w`, `6m`, `1y` ago: seconds since the epoch."""
    import re
    import time
    from datetime import datetime

    t = text.strip().lower()
    m = re.fullmatch(r"(\d+)\s*([dwmy])", t)
    if m:
        return time.time() - int(m.group(1)) * _AGO[m.group(2)]
    try:
        return datetime.fromisoformat(t).timestamp()
    except ValueError:
        raise SearchError(
            f"cannot read the date {text!r}: write it as 2024-03-01, or as 30d, 2w, 6m, 1y ago"
        ) from None


def make_scope(folder: str | None = None, kinds: str | list[str] | tuple[str, ...] | None = None,
               since: str | None = None) -> Scope:  # fmt: skip
    """A Scope from what a user typed: a folder path, kind names ("pdf,sheet"), a date."""
    from .kinds import kinds_named

    names = kinds.split(",") if isinstance(kinds, str) else list(kinds or [])
    return Scope(
        str(Path(folder).expanduser().resolve()) if folder else None,
        kinds_named([n for n in names if n.strip()]),
        since_time(since) if since else None,
    )


def option(default: Any, help: str, *, choices: tuple[str, ...] | None = None,
           flag: bool = True, saved: bool = False, env: str | None = None) -> Any:
    """A setting and everything said about it once: its help line and choices (the CLI's
    flags and `kbapp eval`'s keys are made from these), whether the library saves it per
    model (`kbapp settings`, the window), and its KBAPP_* name when it is not the field's."""
    return field(default=default, metadata={"help": help, "choices": choices, "flag": flag,
                                            "saved": saved, "env": env})  # fmt: skip


@dataclass(frozen=True)
class SearchOptions:
    """Everything a single search may override. Thresholds are cosine similarities; None
    (the default) means the library's own calibration for its model (kbapp.calibrate)."""

    mode: str = option("auto", "channel: auto routes symbols to bm25", choices=MODES, saved=True)
    prose_mode: str = option("hybrid", "what auto uses for prose", choices=PROSE_MODES,
                             saved=True)  # fmt: skip
    top_k: int = option(8, "results to return", saved=True)
    candidates: int = option(40, "candidates per channel")
    min_dense: float | None = option(
        None, "gate floor: cosine similarity below is dropped (default: the calibration)",
        saved=True,
    )  # fmt: skip
    weak_dense: float | None = option(
        None, "below this similarity a result is a weak match (default: the calibration)",
        saved=True,
    )  # fmt: skip
    rerank: bool = option(False, "rerank candidates with a cross-encoder")
    rerank_model: str | None = option(None, "cross-encoder folder or cached model name")
    fusion: str = option("score", "how hybrid fuses its channels", choices=FUSIONS, flag=False)
    # score fusion: a passage is as close as its closest sentence
    sentences: bool = option(True, "score a passage by its closest sentence too", flag=False)
    rrf_k: int = option(60, "RRF's k (fusion=rrf only)", flag=False)
    # keep every candidate's evidence on the result (the evaluation)
    explain: bool = field(default=False, metadata={"internal": True})

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise SearchError(
                f"unknown search mode {self.mode!r}; choose one of {', '.join(MODES)}"
            )
        if self.prose_mode not in PROSE_MODES:
            raise SearchError(
                f"unknown prose mode {self.prose_mode!r}; choose one of {', '.join(PROSE_MODES)}"
            )
        if self.fusion not in FUSIONS:
            raise SearchError(
                f"unknown fusion {self.fusion!r}; choose one of {', '.join(FUSIONS)}"
            )
        for name, value in (("floor (min_dense)", self.min_dense),
                            ("weak-match threshold (weak_dense)", self.weak_dense)):  # fmt: skip
            if value is not None and not -1.0 <= value <= 1.0:
                raise SearchError(
                    f"the {name} is a cosine similarity between -1 and 1, not {value:g}; "
                    "leave it unset to use the library's own calibration"
                )
        if self.top_k < 1 or self.candidates < 1:
            raise SearchError("top_k and candidates must be at least 1")
        if None not in (self.weak_dense, self.min_dense) and self.weak_dense < self.min_dense:
            raise SearchError(
                f"the weak-match threshold ({self.weak_dense}) must not be below "
                f"the floor ({self.min_dense})"
            )

    def with_overrides(self, **overrides: Any) -> SearchOptions:
        """A copy with the given fields changed; None values leave a field as it is."""
        given = {k: v for k, v in overrides.items() if v is not None}
        return replace(self, **given)


@dataclass(frozen=True)
class ChunkOptions:
    target: int = option(512, "chunk target size in characters", env="chunk_target")
    overlap: int = option(0, "characters a chunk repeats of the one before", env="chunk_overlap")
    header: bool = option(True, "embed each passage with its [Title > Section] header", env="-")
    # fixed-size cutting, only for evaluation comparisons
    blind: bool = option(False, "fixed-size cutting (evaluation only)", env="-")
    # cut a long paragraph into even pieces instead of greedily
    balanced: bool = option(False, "cut long paragraphs into even pieces", env="-")

    @property
    def signature(self) -> str:
        """Part of the pipeline version: changing how we chunk makes documents stale."""
        kind = "blind" if self.blind else ("Eb" if self.balanced else "E")
        return f"{kind}-t{self.target}-o{self.overlap}-h{int(self.header)}"


@dataclass(frozen=True)
class Settings:
    library: Path  # the library's folder; for a team library, this machine's folder for it
    model: str | None = None  # None: the library's own model (bundled for a new one)
    backend: str | None = None  # torch | onnx-fp32 | onnx-int8; None: the library's own
    chunk: ChunkOptions = ChunkOptions()
    search: SearchOptions = SearchOptions()
    ocr_language: str = option("eng", "Tesseract's language(s), e.g. eng+fin")
    # per page, plus time per megapixel (extract/ocr.py)
    ocr_timeout_s: float = option(60.0, "seconds OCR may take per page", env="ocr_timeout")
    extract_time_limit_s: float = option(900.0, "seconds one document may take to read",
                                         env="time_limit")  # fmt: skip
    max_text_mb: float = option(50.0, "the largest text kept of one document, in MB")
    batch_size: int = option(32, "passages embedded at once", env="-")
    workers: int = option(0, "extraction processes; 0: one per core")
    # A team library: milvus://HOST:PORT/NAME (a Milvus server) or milvus:///PATH/FILE.db
    # (a Milvus Lite file) holds the whole library; `library` is then this machine's
    # folder for it (logs, the folder list's copy). None: the library is `library`.
    remote: str | None = field(default=None, metadata={"internal": True})  # KBAPP_LIBRARY
    # Shared folders as this machine reaches them: ((indexer's prefix, this machine's), ...)
    path_map: tuple[tuple[str, str], ...] = ()

    @property
    def location(self) -> str:
        """Where the library is, as a user names it."""
        return self.remote or str(self.library)


def default_library_path() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "library"


REMOTE_SCHEME = "milvus://"


def team_library_path(remote: str) -> Path:
    """This machine's folder for a team library (its address made a folder name)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", remote[len(REMOTE_SCHEME):]).strip("_") or "team"
    return default_library_path().parent / "team" / name


def parse_path_map(raw: str) -> tuple[tuple[str, str], ...]:
    """KBAPP_PATH_MAP="/srv/share=/mnt/share;/srv/other=S:\\other": the indexer's folder
    prefix = where this machine reaches it, pairs separated by ';'."""
    pairs = []
    for part in raw.split(";"):
        if not part.strip():
            continue
        there, sep, here = part.partition("=")
        if not sep or not there.strip() or not here.strip():
            raise KbError(f"KBAPP_PATH_MAP: {part!r} is not FOLDER_ON_THE_INDEXER=FOLDER_HERE")
        pairs.append((there.strip(), here.strip()))
    return tuple(pairs)


def log_dir() -> Path:
    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def _env_value(name: str, kind: type) -> Any:
    raw = os.environ.get(f"KBAPP_{name.upper()}")
    if raw is None or raw == "":
        return None
    if kind is bool:
        return raw.strip().lower() in ("1", "true", "yes", "on")
    try:
        return kind(raw)
    except ValueError as exc:
        what = {"int": "whole number", "float": "number"}.get(kind.__name__, kind.__name__)
        raise KbError(f"KBAPP_{name.upper()}={raw!r} is not a {what}; fix or unset it") from exc


def _scalar(hint: Any) -> type | None:
    """int, float, bool or str for a field annotated so (or as `X | None`); else None."""
    scalars = (int, float, bool, str)
    if hint in scalars:
        return hint
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if len(args) == 1 and args[0] in scalars else None


def _from_env(cls: type, base: Any) -> Any:
    """KBAPP_<NAME> for every scalar setting of the dataclass (NAME: the field's, or the
    one its `option` names; "-": none). The annotations are read as types (they are
    strings under `from __future__ import annotations`: matching them by their text once
    missed `float | None`, and KBAPP_MIN_DENSE was silently ignored)."""
    hints = typing.get_type_hints(cls)
    changes = {}
    for f in fields(cls):
        kind = _scalar(hints[f.name])
        name = f.metadata.get("env") or f.name
        if kind is None or name == "-" or f.metadata.get("internal"):
            continue
        value = _env_value(name, kind)
        if value is not None:
            changes[f.name] = value
    return replace(base, **changes)


def settable(cls: type) -> dict[str, type]:
    """The scalar settings of SearchOptions or ChunkOptions by name, with their types (the
    keys `kbapp eval --config` takes)."""
    hints = typing.get_type_hints(cls)
    return {f.name: _scalar(hints[f.name]) for f in fields(cls)
            if not f.metadata.get("internal") and _scalar(hints[f.name])}  # fmt: skip


SAVED_SEARCH_KEYS = tuple(f.name for f in fields(SearchOptions) if f.metadata.get("saved"))


def add_flags(group, cls: type, saved_only: bool = False, defaults: bool = True) -> None:
    """argparse flags for a settings dataclass, from its schema: --top-k for top_k, a
    --x/--no-x pair for a bool, choices where there are. Unset flags are None: they leave
    the library's own settings as they are."""
    import argparse

    hints = typing.get_type_hints(cls)
    for f in fields(cls):
        meta = f.metadata
        if not meta.get("flag", False) or (saved_only and not meta.get("saved")):
            continue
        kind = _scalar(hints[f.name])
        shown = f.default if defaults and f.default is not None else None
        said = shown is not None and not isinstance(shown, bool)
        help_ = meta["help"] + (f" (default {shown})" if said else "")
        name = "--" + f.name.replace("_", "-")
        if kind is bool:
            group.add_argument(name, action=argparse.BooleanOptionalAction, default=None,
                               help=help_)  # fmt: skip
        else:
            group.add_argument(name, type=kind, choices=meta.get("choices"), help=help_)


def flag_values(namespace, cls: type) -> dict[str, Any]:
    """The settings of `cls` a command line gave (unset ones are None)."""
    return {f.name: getattr(namespace, f.name) for f in fields(cls)
            if hasattr(namespace, f.name)}  # fmt: skip


def load_settings(library: str | os.PathLike[str] | None = None, **search: Any) -> Settings:
    """Defaults, then KBAPP_* environment variables, then explicit arguments."""
    lib = library or os.environ.get("KBAPP_LIBRARY") or default_library_path()
    remote = str(lib) if str(lib).startswith(REMOTE_SCHEME) else None
    if remote is not None:
        lib = team_library_path(remote)
    model = os.environ.get("KBAPP_MODEL") or None
    backend = os.environ.get("KBAPP_BACKEND") or None
    search_opts = _from_env(SearchOptions, SearchOptions()).with_overrides(**search)
    chunk_opts = _from_env(ChunkOptions, ChunkOptions())
    if chunk_opts.target < 64 or chunk_opts.overlap < 0:
        raise KbError("KBAPP_CHUNK_TARGET must be at least 64 and KBAPP_CHUNK_OVERLAP at least 0")
    base = Settings(library=Path(lib).expanduser().resolve(), model=model, backend=backend,
                    chunk=chunk_opts, search=search_opts, remote=remote,
                    path_map=parse_path_map(os.environ.get("KBAPP_PATH_MAP", "")))  # fmt: skip
    return _from_env(Settings, base)
