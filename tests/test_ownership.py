"""Who owns the library: one writer, readers that follow it, read-only verbs that write
nothing, and SQL only in the storage layer."""

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import FakeEncoder, make_library

from kbapp.errors import LibraryBusy

ROOT = Path(__file__).resolve().parents[1]

WRITER = """
import sys
sys.path.insert(0, {tests!r})
from conftest import FakeEncoder, make_library
lib = make_library(__import__("pathlib").Path({lib!r}), FakeEncoder())
lib.index([{folder!r}])
lib.close()
"""


def _run_writer(lib: Path, folder: Path) -> None:
    code = WRITER.format(tests=str(ROOT / "tests"), lib=str(lib), folder=str(folder))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_a_reader_finds_what_another_process_indexed_without_restarting(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pumps.md").write_text("The bilge pump was primed before the voyage.")
    reader = make_library(tmp_path / "lib", FakeEncoder())
    reader.index([docs])
    assert reader.search("bilge pump primed", mode="dense").hits  # cache loaded and in use

    (docs / "kites.md").write_text("Kites need steady wind over the dunes to fly well.")
    _run_writer(tmp_path / "lib", docs)  # another process writes while this one is open

    hits = reader.search("kites steady wind dunes", mode="dense", min_dense=-1).hits
    assert hits[0].name == "kites.md"
    hits = reader.search("kites dunes", mode="bm25").hits
    assert hits and hits[0].name == "kites.md"
    # and a removal elsewhere leaves the reader's dense channel too
    (docs / "kites.md").unlink()
    _run_writer(tmp_path / "lib", docs)
    names = {h.name for h in reader.search("kites steady wind", mode="dense", min_dense=-1).hits}
    assert "kites.md" not in names
    reader.close()


def test_opening_with_another_model_writes_nothing(tmp_path, fake_encoder):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("Lighthouses guide ships at night.")
    lib = make_library(tmp_path / "lib", fake_encoder)
    lib.index([docs])
    lib.close()
    db = tmp_path / "lib" / "library.db"
    before = _dump(db)

    class Other(FakeEncoder):
        name = "other-model"

    other = make_library(tmp_path / "lib", Other())
    assert {d.state for d in other.status().documents} == {"stale"}  # as this model sees it
    with pytest.raises(Exception, match="another model"):
        other.search("lighthouses", mode="dense")
    other.close()
    again = make_library(tmp_path / "lib", fake_encoder)
    assert {d.state for d in again.status().documents} == {"indexed"}
    assert again.search("lighthouses ships", mode="dense").hits
    again.close()
    assert _dump(db) == before


def _dump(db: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return list(conn.iterdump())


def test_a_second_writer_is_refused_even_for_folder_changes(tmp_path, fake_encoder):
    one = make_library(tmp_path / "lib", fake_encoder)
    two = make_library(tmp_path / "lib", fake_encoder)
    folder = tmp_path / "docs"
    folder.mkdir()
    with one.writer():
        with pytest.raises(LibraryBusy, match="in use"):
            two.add_folder(folder)
        with pytest.raises(LibraryBusy):
            two.set_folder_paused(folder, True)
    two.add_folder(folder)
    assert [p for p, _ in one.folders()] == [str(folder.resolve())]
    one.close()
    two.close()


def test_no_sql_outside_the_storage_layer():
    offenders = []
    for path in (ROOT / "kbapp").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("kbapp/store/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("execute", "executemany",
                                                                  "executescript"):  # fmt: skip
                offenders.append(f"{rel}:{node.lineno}")
    assert offenders == []


def _imports(path: Path, package: str) -> set[str]:
    mod = package
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = mod.split(".")
            base = base[: len(base) - node.level + (1 if path.name == "__init__.py" else 0)]
            target = ".".join(base + ([node.module] if node.module else []))
            out.add(target)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kbapp"):
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("kbapp"))
    return out


def test_no_import_cycles_between_kbapp_modules():
    modules: dict[str, set[str]] = {}
    for path in (ROOT / "kbapp").rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        modules[name] = set()
        modules[name] = {m for m in _imports(path, name)}
    known = set(modules)

    def resolve(m: str) -> str | None:
        while m and m not in known:
            m = m.rpartition(".")[0]
        return m or None

    graph = {
        m: {r for r in map(resolve, deps) if r and r != m and not m.startswith(r + ".")
            and not r.startswith(m + ".")}
        for m, deps in modules.items()
    }  # fmt: skip
    # a package's __init__ re-exporting its own modules is not a cycle
    cycles = []
    state: dict[str, int] = {}

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d] if d in stack else [m, d])
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == [], cycles


def test_bad_environment_values_are_explained_not_tracebacks(tmp_path):
    env = dict(os.environ, KBAPP_CHUNK_TARGET="abc")
    proc = subprocess.run(
        [sys.executable, "-m", "kbapp", "--library", str(tmp_path / "lib"), "status"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "KBAPP_CHUNK_TARGET" in proc.stderr and "abc" in proc.stderr


def test_a_dense_only_reader_is_not_fooled_by_a_damaged_cache(tmp_path, fake_encoder):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(30):
        (docs / f"n{i}.md").write_text(f"Note {i} about harbour cranes number {i}.")
    lib = make_library(tmp_path / "lib", fake_encoder)
    lib.index([docs])
    expected = [h.chunk_id for h in lib.search("harbour cranes 7", mode="dense").hits]
    lib.close()
    hnsw = tmp_path / "lib" / "vectors.hnsw"
    data = bytearray(hnsw.read_bytes())
    # overwrite the float payload (the stamp and labels stay as they were)
    start = len(data) // 3
    data[start : start + len(data) // 3] = os.urandom(len(data) // 3)
    hnsw.write_bytes(bytes(data))
    again = make_library(tmp_path / "lib", fake_encoder)
    assert [h.chunk_id for h in again.search("harbour cranes 7", mode="dense").hits] == expected
    again.close()


def test_the_vector_file_reuses_deleted_slots(tmp_path, fake_encoder):
    docs = tmp_path / "docs"
    docs.mkdir()
    note = docs / "n.md"
    lib = make_library(tmp_path / "lib", fake_encoder)
    sizes = []
    for i in range(6):
        note.write_text(textwrap.dedent(f"""\
            Version {i} of a note about tidal charts.

            Second paragraph {i}, about moorings."""))
        os.utime(note, (i + 10, i + 10))
        lib.index([docs])
        sizes.append(lib.vectors._index.get_current_count())
    assert sizes[-1] == sizes[1], sizes  # re-indexing does not grow the index
    lib.close()
