"""KBAPP_* settings as the README tells users to set them."""

import pytest
from conftest import make_library

from kbapp.config import load_settings
from kbapp.errors import KbError, SearchError


def test_the_gate_thresholds_are_read_from_the_environment(tmp_path, monkeypatch, fake_encoder):
    """KBAPP_MIN_DENSE and KBAPP_WEAK_DENSE were silently ignored (`float | None`)."""
    monkeypatch.setenv("KBAPP_MIN_DENSE", "0.55")
    monkeypatch.setenv("KBAPP_WEAK_DENSE", "0.65")
    monkeypatch.setenv("KBAPP_TOP_K", "3")
    opts = load_settings(tmp_path / "lib").search
    assert (opts.min_dense, opts.weak_dense, opts.top_k) == (0.55, 0.65, 3)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Ships\n\nLighthouses guide ships along the rocky coast.\n")
    lib = make_library(tmp_path / "lib", fake_encoder)
    lib.index([docs])
    result = lib.search("lighthouses ships")
    assert (result.floor, result.weak, result.floor_source) == (0.55, 0.65, "set")


@pytest.mark.parametrize("name,value,needle", [
    ("KBAPP_MIN_DENSE", "2", "between -1 and 1"),
    ("KBAPP_MIN_DENSE", "high", "KBAPP_MIN_DENSE='high' is not a number"),
    ("KBAPP_TOP_K", "3.5", "KBAPP_TOP_K='3.5' is not a whole number"),
])  # fmt: skip
def test_a_bad_environment_value_is_named(tmp_path, monkeypatch, name, value, needle):
    monkeypatch.setenv(name, value)
    with pytest.raises((KbError, SearchError), match=needle):
        load_settings(tmp_path / "lib")


def test_the_window_opens_with_the_backend_asked_for(tmp_path, monkeypatch):
    """`kbapp --backend torch` opened the window on the default backend."""
    import kbapp.gui.app
    from kbapp.cli import main

    asked = []
    monkeypatch.setattr(kbapp.gui.app, "run_app", lambda *a: asked.append(a) or 0)
    assert main(["--library", str(tmp_path / "lib"), "--backend", "torch"]) == 0
    assert asked == [(str(tmp_path / "lib"), None, "torch")]


def test_one_schema_gives_every_search_setting_its_flag_env_name_and_eval_key(tmp_path,
                                                                             monkeypatch):  # fmt: skip
    """Typed once (config.option): a setting reaches the environment, the command line and
    `kbapp eval --config` alike; `kbapp settings` offers exactly what the library saves."""
    import argparse
    from dataclasses import fields

    from kbapp.cli import build_parser
    from kbapp.config import SAVED_SEARCH_KEYS, ChunkOptions, SearchOptions
    from kbapp.evaluate.runner import EvalConfig, parse_config

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flags = {cmd: {o for act in sub.choices[cmd]._actions for o in act.option_strings}
             for cmd in ("search", "context", "settings", "eval")}  # fmt: skip
    for f in fields(SearchOptions):
        if f.metadata.get("flag"):
            flag = "--" + f.name.replace("_", "-")
            assert flag in flags["search"] and flag in flags["context"] and flag in flags["eval"]
            assert (flag in flags["settings"]) == (f.name in SAVED_SEARCH_KEYS)
    for f in fields(ChunkOptions):
        assert "--" + f.name in flags["eval"]
    base = EvalConfig("base", ChunkOptions(), SearchOptions())
    cfg = parse_config("candidates=12,rrf_k=30,sentences=false,target=300,balanced=true", base)
    assert (cfg.search.candidates, cfg.search.rrf_k, cfg.search.sentences) == (12, 30, False)
    assert (cfg.chunk.target, cfg.chunk.balanced) == (300, True)
    monkeypatch.setenv("KBAPP_CANDIDATES", "17")
    monkeypatch.setenv("KBAPP_CHUNK_TARGET", "400")
    monkeypatch.setenv("KBAPP_OCR_TIMEOUT", "12.5")
    monkeypatch.setenv("KBAPP_WORKERS", "1")
    s = load_settings(tmp_path / "lib")
    assert (s.search.candidates, s.chunk.target, s.ocr_timeout_s, s.workers) == (17, 400, 12.5, 1)
