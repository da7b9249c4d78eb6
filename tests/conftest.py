"""Shared fixtures: fresh libraries, a deterministic fake encoder for plumbing tests, the
real bundled model for retrieval tests, and real documents made on the fly."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from kbapp.config import load_settings  # noqa: E402
from kbapp.embed.hashed import HashedEncoder  # noqa: E402
from kbapp.library import Library  # noqa: E402

# The public evaluation set ships with the repository (resources/eval/, CC BY-SA 4.0).
SQUAD = Path(__file__).resolve().parents[1] / "resources" / "eval" / "squad-public"


# Bag of hashed words: deterministic, instant, unit length. For plumbing only.
FakeEncoder = HashedEncoder


@pytest.fixture
def fake_encoder() -> FakeEncoder:
    return FakeEncoder()


@pytest.fixture(scope="session")
def real_encoder():
    """The bundled model as users get it (the default backend)."""
    from kbapp.embed import load_encoder

    return load_encoder()


@pytest.fixture(scope="session")
def torch_encoder():
    """The reference: sentence-transformers, torch fp32."""
    from kbapp.config import BUNDLED_MODEL
    from kbapp.embed import load_encoder

    return load_encoder(BUNDLED_MODEL)


def make_library(path: Path, encoder=None, **settings) -> Library:
    s = load_settings(path)
    if settings:
        s = replace(s, **settings)
    return Library(s, encoder)


@pytest.fixture
def library(tmp_path, fake_encoder):
    lib = make_library(tmp_path / "lib", fake_encoder)
    yield lib
    lib.close()


@pytest.fixture
def real_library(tmp_path, real_encoder):
    lib = make_library(tmp_path / "lib", real_encoder)
    yield lib
    lib.close()


def make_pdf(
    path: Path,
    pages: list[str],
    fontsize: float = 11,
    header: str | None = None,
    toc: list[tuple[int, str, int]] | None = None,
) -> Path:
    """A real text PDF: one string per page, wrapped into the page box."""
    import pymupdf

    doc = pymupdf.open()
    for n, body in enumerate(pages, start=1):
        page = doc.new_page(width=595, height=842)
        if header:
            page.insert_text((72, 40), header, fontsize=9)
            page.insert_text((290, 815), str(n), fontsize=9)
        page.insert_textbox(pymupdf.Rect(72, 72, 523, 780), body, fontsize=fontsize)
    if toc:
        doc.set_toc(toc)
    doc.save(path)
    doc.close()
    return path


def make_scanned_pdf(path: Path, pages: list[str], dpi: int = 200) -> Path:
    """Render real text pages to images and build an image-only PDF: a scan."""
    import pymupdf

    src = pymupdf.open()
    for body in pages:
        page = src.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(72, 72, 523, 780), body, fontsize=14)
    out = pymupdf.open()
    for page in src:
        pix = page.get_pixmap(dpi=dpi)
        img = out.new_page(width=page.rect.width, height=page.rect.height)
        img.insert_image(img.rect, stream=pix.tobytes("png"))
    out.save(path)
    return path


REAL_MODEL_FIXTURES = {"real_encoder", "real_library", "torch_encoder"}


def pytest_collection_modifyitems(config, items):
    """The fast lane (`make test-fast`: `-m "not model and not gui"`) is every test that
    needs neither the real model nor a window. A test is `model` when it asks for the real
    encoder, or when its module runs the kbapp CLI in a subprocess (which loads it); it is
    `torch` when it asks for the torch reference (run in the venv with the torch extra)."""
    spawns: dict[str, bool] = {}
    for item in items:
        path = str(item.fspath)
        if path not in spawns:
            try:
                source = Path(path).read_text(encoding="utf-8")
            except OSError:
                source = ""
            spawns[path] = '"-m", "kbapp"' in source
        if REAL_MODEL_FIXTURES & set(getattr(item, "fixturenames", ())) or spawns[path]:
            item.add_marker(pytest.mark.model)
        if "torch_encoder" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.torch)
