"""Settings: defaults, KBAPP_* environment overrides, per-request overrides, and paths.

The search defaults below were chosen by measurement on the public evaluation set;
docs/EVALUATION.md has the tables and the commands that reproduce them.
"""

from __future__ import annotations

import os
import typing
from dataclasses import dataclass, fields, replace
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


@dataclass(frozen=True)
class SearchOptions:
    """Everything a single search may override. Thresholds are cosine similarities; None
    (the default) means the library's own calibration for its model (kbapp.calibrate)."""

    mode: str = "auto"
    prose_mode: str = "hybrid"
    top_k: int = 8
    candidates: int = 40
    min_dense: float | None = None
    weak_dense: float | None = None
    rerank: bool = False
    rerank_model: str | None = None
    fusion: str = "score"
    sentences: bool = True  # score fusion: a passage is as close as its closest sentence
    rrf_k: int = 60  # only for fusion="rrf"
    explain: bool = False  # keep every candidate's evidence on the result (the evaluation)

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
    target: int = 512
    overlap: int = 0
    header: bool = True
    blind: bool = False  # fixed-size cutting, only for evaluation comparisons
    balanced: bool = False  # cut a long paragraph into even pieces instead of greedily

    @property
    def signature(self) -> str:
        """Part of the pipeline version: changing how we chunk makes documents stale."""
        kind = "blind" if self.blind else ("Eb" if self.balanced else "E")
        return f"{kind}-t{self.target}-o{self.overlap}-h{int(self.header)}"


@dataclass(frozen=True)
class Settings:
    library: Path
    model: str | None = None  # None: the library's own model (bundled for a new one)
    backend: str | None = None  # torch | onnx-fp32 | onnx-int8; None: the library's own
    chunk: ChunkOptions = ChunkOptions()
    search: SearchOptions = SearchOptions()
    ocr_language: str = "eng"
    ocr_timeout_s: float = 60.0  # per page, plus time per megapixel (extract/ocr.py)
    extract_time_limit_s: float = 900.0
    max_text_mb: float = 50.0
    batch_size: int = 32
    workers: int = 0  # extraction processes; 0: one per core


def default_library_path() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "library"


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
    """KBAPP_<FIELD> for every scalar field of the dataclass. The annotations are read as
    types (they are strings under `from __future__ import annotations`: matching them by
    their text once missed `float | None`, and KBAPP_MIN_DENSE was silently ignored)."""
    hints = typing.get_type_hints(cls)
    changes = {}
    for f in fields(cls):
        kind = _scalar(hints[f.name])
        if kind is None:
            continue
        value = _env_value(f.name, kind)
        if value is not None:
            changes[f.name] = value
    return replace(base, **changes)


def load_settings(library: str | os.PathLike[str] | None = None, **search: Any) -> Settings:
    """Defaults, then KBAPP_* environment variables, then explicit arguments."""
    lib = library or os.environ.get("KBAPP_LIBRARY") or default_library_path()
    model = os.environ.get("KBAPP_MODEL") or None
    backend = os.environ.get("KBAPP_BACKEND") or None
    search_opts = _from_env(SearchOptions, SearchOptions()).with_overrides(**search)
    chunk_opts = ChunkOptions(
        target=_env_value("chunk_target", int) or ChunkOptions.target,
        overlap=_env_value("chunk_overlap", int) or ChunkOptions.overlap,
    )
    if chunk_opts.target < 64 or chunk_opts.overlap < 0:
        raise KbError("KBAPP_CHUNK_TARGET must be at least 64 and KBAPP_CHUNK_OVERLAP at least 0")
    env = {
        k: v for k, v in {
            "ocr_language": _env_value("ocr_language", str),
            "max_text_mb": _env_value("max_text_mb", float),
            "ocr_timeout_s": _env_value("ocr_timeout", float),
            "extract_time_limit_s": _env_value("time_limit", float),
            "workers": _env_value("workers", int),
        }.items() if v is not None
    }  # fmt: skip
    return Settings(
        library=Path(lib).expanduser().resolve(), model=model, backend=backend, chunk=chunk_opts,
        search=search_opts, **env,
    )  # fmt: skip
