"""The command line as a user runs it: real subprocesses, the real bundled model."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SQUAD, make_scanned_pdf


def kb(*args, lib, check=True):
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, "-m", "kbapp", "--library", str(lib), *args],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    if check and proc.returncode != 0:
        raise AssertionError(f"kbapp {args} failed: {proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """Three real Wikipedia articles of the public set, one corrupt PDF and one scanned
    PDF (Tesseract comes with `make setup`)."""
    root = tmp_path_factory.mktemp("cli")
    docs = root / "docs"
    docs.mkdir()
    for name in ("Nikola_Tesla.md", "Oxygen.md", "Warsaw.md"):
        shutil.copy(SQUAD / "corpus" / name, docs / name)
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    make_scanned_pdf(docs / "scan.pdf", [
        "Chapter one is about gardening tools and seeds.",
        "The greenhouse heater must be switched off every night in April.",
    ])  # fmt: skip
    lib = root / "lib"
    proc = kb("index", str(docs), lib=lib)
    return lib, docs, proc


def test_index_reports_progress_and_failures(indexed):
    _, _, proc = indexed
    assert "indexed" in proc.stderr and "1 failed" in proc.stderr


def test_search_json_cites_canonical_slices(indexed):
    lib, docs, _ = indexed
    out = json.loads(
        kb("search", "What modern-day country was Tesla born in?", "--json", lib=lib).stdout
    )
    assert out["state"] in ("ok", "weak") and out["results"]
    top = out["results"][0]
    assert set(top) >= {"rank", "document", "document_name", "section", "locator", "page",
                        "page_from", "page_to", "char_from", "char_to", "content", "scores",
                        "weak_match"}  # fmt: skip
    assert set(top["scores"]) >= {"dense", "bm25", "fused"}
    assert any("(modern-day Croatia)" in r["content"] for r in out["results"][:3])
    for r in out["results"]:
        text = Path(r["document"]).read_text(encoding="utf-8")
        assert text[r["char_from"] : r["char_to"]] == r["content"]
        assert r["locator"] == f"#char={r['char_from']},{r['char_to']}" and r["page"] is None
        shown = kb("show", f"{r['document']}#char={r['char_from']},{r['char_to']}", lib=lib).stdout
        assert shown.rstrip("\n") == r["content"]


def test_unrelated_question_gets_no_answer(indexed):
    lib, _, _ = indexed
    proc = kb("search", "how do i renew my spanish passport", lib=lib)
    assert proc.stdout.startswith("No answer: the closest passage (")
    assert "is below" in proc.stdout and "floor" in proc.stdout
    out = json.loads(kb("search", "how do i renew my spanish passport", "--json", lib=lib).stdout)
    assert out["state"] == "no_answer" and out["results"] == [] and out["dropped"] > 0


def test_status_json_lists_every_document(indexed):
    lib, docs, _ = indexed
    st = json.loads(kb("status", "--json", lib=lib).stdout)
    by = {d["name"]: d for d in st["documents"]}
    assert by["broken.pdf"]["state"] == "failed" and by["broken.pdf"]["reason"]
    assert by["Oxygen.md"]["state"] == "indexed" and by["Oxygen.md"]["chunks"] > 10
    assert all(os.path.isabs(d["path"]) for d in st["documents"])
    assert st["model"] and by["Oxygen.md"]["model"] == st["model"]


@pytest.mark.ocr  # Tesseract comes with `make setup`: missing, this fails
def test_scanned_pdf_is_searchable_with_the_right_page(indexed):
    lib, _, _ = indexed
    out = json.loads(kb("search", "When must the greenhouse heater be switched off?", "--json",
                        lib=lib).stdout)  # fmt: skip
    top = out["results"][0]
    assert top["document_name"] == "scan.pdf" and top["page"] == 2 and top["locator"] == "#page=2"
    assert "greenhouse heater" in top["content"]
    page = kb("show", f"{top['document']}#page=2", lib=lib).stdout
    assert "greenhouse" in page


def test_context_prompt_numbers_sources(indexed):
    lib, _, _ = indexed
    prompt = kb("context", "What is the capital of Poland?", lib=lib).stdout
    assert "Cite every claim as [n]" in prompt and "[1] Warsaw.md" in prompt
    assert "QUESTION\nWhat is the capital of Poland?" in prompt


def test_bm25_mode_and_symbol_routing(indexed):
    lib, _, _ = indexed
    out = json.loads(kb("search", "paramagnetic", "--mode", "bm25", "--json", lib=lib).stdout)
    assert out["channel"] == "bm25" and "aramagnetic" in out["results"][0]["content"]


def test_a_query_may_start_with_a_dash(indexed):
    lib, _, _ = indexed
    out = json.loads(kb("search", "-paramagnetic", "--mode", "bm25", "--json", lib=lib).stdout)
    assert out["query"] == "-paramagnetic" and "aramagnetic" in out["results"][0]["content"]
    prompt = kb("context", "-what is the capital of Poland?", lib=lib).stdout
    assert "[1] Warsaw.md" in prompt
    proc = kb("status", "-bogus", lib=lib, check=False)  # other commands still refuse it
    assert proc.returncode == 2 and "unrecognized arguments: -bogus" in proc.stderr


@pytest.mark.parametrize("args,needle", [
    (("search", ""), "empty"),
    (("search",), "needs a query"),
    (("search", "x", "--mode", "nope"), "invalid choice"),
    (("show", "nowhere.md#char=1,2"), "not in this library"),
    (("show", "bad-citation"), "not a citation"),
    (("retry", "/no/such/file.pdf"), "not in this library"),
    (("search", "x", "--since", "yesterday"), "write it as 2024-03-01"),
    (("search", "oxygen", "--kind", "slides"), "no indexed document is of kind"),
    (("search", "oxygen", "--kind", "pictures"), "unknown kind 'pictures'"),
])  # fmt: skip
def test_bad_input_is_one_clear_line(indexed, args, needle):
    lib, _, _ = indexed
    proc = kb(*args, lib=lib, check=False)
    assert proc.returncode != 0 and needle in proc.stderr and "Traceback" not in proc.stderr


def test_version_and_help():
    proc = subprocess.run(
        [sys.executable, "-m", "kbapp", "--version"], capture_output=True, text=True
    )
    assert proc.stdout.startswith("kbapp ")
    helptext = subprocess.run(
        [sys.executable, "-m", "kbapp", "--help"], capture_output=True, text=True
    ).stdout
    for cmd in ("index", "search", "status", "retry", "show", "context", "eval", "bench"):
        assert cmd in helptext


def test_golden_questions_about_these_articles_are_found(indexed, real_encoder):
    """Retrieval quality on a small real corpus: the public golden questions of these three
    articles, with the default settings (gate on), through the library the CLI uses."""
    from conftest import make_library

    lib_path, _, _ = indexed
    rows = [json.loads(line) for line in (SQUAD / "golden.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r.get("doc") in ("Nikola_Tesla", "Oxygen", "Warsaw")]
    assert len(rows) >= 20
    norm = lambda s: " ".join(s.split())  # noqa: E731
    lib = make_library(lib_path, real_encoder)
    found = [
        any(norm(r["needle"]) in norm(h.content) for h in lib.search(r["query"]).hits) for r in rows
    ]
    lib.close()
    print(f"found {sum(found)}/{len(rows)}")
    assert sum(found) / len(rows) >= 0.75  # measured 42/53 = 0.79 with the gate on


def test_settings_are_the_librarys_and_shared_by_every_command(indexed):
    lib, _, _ = indexed
    try:
        out = json.loads(kb("settings", "--mode", "bm25", "--min-dense", "0.5", "--json",
                            lib=lib).stdout)  # fmt: skip
        assert out["mode"] == "bm25" and out["min_dense"] == 0.5 and out["gate"]["source"] == "set"
        found = json.loads(kb("search", "paramagnetic", "--json", lib=lib).stdout)
        assert found["channel"] == "bm25"  # the saved mode applies without an option
        assert json.loads(kb("status", "--json", lib=lib).stdout)["gate"]["floor"] == 0.5
    finally:
        reset = json.loads(kb("settings", "--reset", "--json", lib=lib).stdout)
    assert reset["mode"] == "auto" and reset["min_dense"] is None
    assert reset["gate"]["source"] in ("calibrated", "default")


def test_settings_outside_their_meaning_are_refused_and_nothing_is_saved(indexed):
    """`--min-dense 2` once made every later search say No answer."""
    lib, _, _ = indexed
    for value in ("2", "-5"):
        bad = kb("settings", "--min-dense", value, lib=lib, check=False)
        assert bad.returncode != 0 and "between -1 and 1" in bad.stderr, bad.stderr
        assert "Traceback" not in bad.stderr
    assert json.loads(kb("settings", "--json", lib=lib).stdout)["min_dense"] is None


@pytest.mark.parametrize("args", [
    ("search", "tesla"), ("context", "tesla"), ("status",), ("show", "a.md#char=1,2"),
    ("check",), ("settings",), ("retry",), ("rebuild",), ("remove", "/x"), ("calibrate",),
])  # fmt: skip
def test_a_mistyped_library_path_is_named_and_nothing_is_created(tmp_path, args):
    """`--library ~/kbap search ...` once made an empty library there and said No answer."""
    missing = tmp_path / "no" / "such" / "library"
    proc = kb(*args, lib=missing, check=False)
    assert proc.returncode == 1, proc.stderr
    assert f"there is no library at {missing}" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "no").exists()


def test_the_first_run_says_it_prepares_the_model_in_one_line_and_logs_the_rest(tmp_path):
    """The first run once printed a "Loading weights" bar and ONNX Runtime's advice
    ("WARNING root: Please consider to run pre-processing before quantization")."""
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(SQUAD / "corpus" / "Oxygen.md", docs)
    env = dict(os.environ, HF_HUB_OFFLINE="1", XDG_CACHE_HOME=str(tmp_path / "cache"),
               XDG_STATE_HOME=str(tmp_path / "state"))  # a machine that never ran kbapp
    proc = subprocess.run(
        [sys.executable, "-m", "kbapp", "--library", str(tmp_path / "lib"), "index", str(docs)],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("Indexing ")]
    assert lines[0].startswith("kbapp: preparing the model for this computer, once: about ")
    # the summary, and where the time went when a stage took a second (on a busy machine)
    said = ("1 indexed", "time: ")
    assert lines[1:] == [ln for ln in lines[1:] if ln.startswith(said)], proc.stderr
    (log,) = (tmp_path / "state").rglob("kbapp.log")
    assert "pre-processing before quantization" in log.read_text()  # kept, not shown


def test_search_narrowed_to_a_folder_and_kind_from_the_command_line(indexed):
    lib, docs, _ = indexed
    out = json.loads(kb("search", "who discovered oxygen", "--kind", "text", "--folder",
                        str(docs), "--json", lib=lib).stdout)  # fmt: skip
    assert out["results"] and all(r["document"].endswith(".md") for r in out["results"])
    out = json.loads(kb("search", 'the "chemical element" oxygen -Priestley', "--json",
                        lib=lib).stdout)  # fmt: skip
    contents = [r["content"].lower() for r in out["results"]]
    assert contents and all("chemical element" in c and "priestley" not in c for c in contents)
