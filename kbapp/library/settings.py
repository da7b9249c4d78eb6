"""Search settings saved in the library per model (the CLI and the window share them), and
the gate's thresholds: set explicitly, this library's calibration, or the fixed default."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace

from ..calibrate import FALLBACK_FLOOR, FALLBACK_WEAK, WEAK_MARGIN, Calibration
from ..calibrate import meta_key as calibration_key
from ..config import SAVED_SEARCH_KEYS, SearchOptions
from ..errors import KbError, SearchError
from ..store import Backend as Store

SEARCH_KEYS = SAVED_SEARCH_KEYS


def _key(model: str) -> str:
    return f"search@{model}"


def saved_search(store: Store, model: str, base: SearchOptions) -> SearchOptions:
    """`base` with what was saved for this library and model on top."""
    try:
        raw = store.get_meta(_key(model))
        saved = json.loads(raw) if raw else {}
        return base.with_overrides(**{k: saved.get(k) for k in SEARCH_KEYS})
    except (ValueError, TypeError, KbError, sqlite3.DatabaseError):
        return base  # an unreadable saved value never stops a search


def save_search(store: Store, model: str, opts: SearchOptions) -> None:
    """Called under the writer lock. A threshold of None means "follow the calibration"."""
    store.set_meta(_key(model), json.dumps({k: getattr(opts, k) for k in SEARCH_KEYS}))


def stored_calibration(store: Store, model: str) -> Calibration | None:
    raw = store.get_meta(calibration_key(model))
    return Calibration.from_json(raw) if raw else None


def store_calibration(store: Store, model: str, cal: Calibration) -> None:
    store.set_meta(calibration_key(model), cal.to_json())


def gate_options(opts: SearchOptions, cal: Calibration | None) -> tuple[SearchOptions, str]:
    """The thresholds a search uses and where they come from: set explicitly ("set"),
    this library's calibration ("calibrated"), or the fixed default ("default")."""
    if opts.min_dense is not None:
        source, floor = "set", opts.min_dense
    elif cal is not None:
        source, floor = "calibrated", cal.floor
    else:
        source, floor = "default", FALLBACK_FLOOR
    if opts.weak_dense is not None:
        weak = opts.weak_dense
    elif source == "calibrated":
        weak = cal.weak
    else:
        weak = min(1.0, floor + WEAK_MARGIN) if source == "set" else FALLBACK_WEAK
    if weak < floor:
        raise SearchError(
            f"the weak-match threshold ({weak}) must not be below the floor ({floor})"
        )
    return replace(opts, min_dense=floor, weak_dense=weak), source
