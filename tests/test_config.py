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
