"""Hostile names, links and text: real files with real (bytes) names, real symlinks."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def kb(*args, lib, env=None, check=True):
    proc = subprocess.run(
        [sys.executable, "-m", "kbapp", *args, "--library", str(lib)],  # options after the command
        capture_output=True, env=dict(os.environ, HF_HUB_OFFLINE="1", **(env or {})),
        timeout=300, cwd=ROOT,
    )  # fmt: skip
    if check:
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc


def test_a_name_that_is_not_utf8_indexes_with_the_rest(tmp_path, library):
    folder = tmp_path / "r1"
    folder.mkdir()
    (folder / "good.md").write_text("Gannets dive for herring off the cliffs.")
    bad = os.path.join(os.fsencode(folder), b"bad\xff name.md")
    with open(bad, "wb") as fh:
        fh.write(b"Puffins nest in burrows on the island.")
    progress = library.index([folder])
    assert progress.indexed == 2 and progress.failed == 0
    docs = {d.name: d for d in library.status().documents}
    assert docs["bad\udcff name.md"].state == "indexed"
    hit = library.search("puffins burrows", mode="bm25").hits[0]
    assert os.fsencode(hit.path) == bad  # the path opens the real file
    assert library.show(f"{hit.path}#char={hit.char_from},{hit.char_to}") == hit.content
    # a second run finds it unchanged: the stored name maps back to the same file
    assert library.index([folder]).unchanged == 2


def test_cli_prints_such_names_and_addresses_them(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.md"), "wb") as fh:
        fh.write(b"Espresso is brewed under pressure.")
    (folder / "two\nlines.md").write_text("Ferries cross the fjord twice a day.")
    lib = tmp_path / "lib"
    kb("index", str(folder), lib=lib)
    status = kb("status", lib=lib).stdout.decode()
    assert "caf\\xe9.md" in status and "two\\nlines.md" in status
    assert all(line.startswith(("library", "model", "indexed", "gate", " ")) for line in
               status.splitlines()), status  # one line per document, nothing broken  # fmt: skip
    out = json.loads(kb("status", "--json", lib=lib).stdout)
    names = {d["name"] for d in out["documents"]}
    assert names == {"caf\udce9.md", "two\nlines.md"}
    shown = kb("show", f"{folder}/two\nlines.md#char=0,7", lib=lib).stdout.decode()
    assert shown.strip() == "Ferries"


def test_links_out_of_the_folder_are_listed_not_followed(tmp_path, library):
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("root:x:0:0 secret outside the folder")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "inside.md").write_text("Inside note about barnacles.")
    (folder / "shadow_link.txt").symlink_to(secret)
    (folder / "inner_link.md").symlink_to(folder / "inside.md")
    (folder / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    library.index([folder])
    docs = {d.name: d for d in library.status().documents}
    assert docs["shadow_link.txt"].state == "skipped"
    assert "outside the folder" in docs["shadow_link.txt"].reason
    assert docs["dangling.md"].state == "skipped"
    assert docs["inner_link.md"].state == "indexed"
    assert library.search("root:x:0:0 secret", mode="bm25").hits == [] or all(
        h.name != "shadow_link.txt" for h in library.search("secret outside", mode="bm25").hits
    )
    # show agrees with the stored path of a link inside the folder
    hit = next(h for h in library.search("barnacles", mode="bm25").hits if h.name == "inner_link.md")
    assert library.show(f"{folder}/inner_link.md#char={hit.char_from},{hit.char_to}") == hit.content


def test_an_unreadable_subfolder_is_listed_with_its_reason():
    """Root reads every folder, so as root the indexer runs without the capabilities that
    let it (setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH), as an ordinary user
    would run it."""
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="kbapp-perm-"))
    try:
        os.chmod(base, 0o777)
        folder = base / "docs"
        (folder / "locked").mkdir(parents=True)
        (folder / "ok.md").write_text("Readable note.")
        for p in (folder, folder / "ok.md"):
            os.chmod(p, 0o777)
        os.chmod(folder / "locked", 0)
        code = (
            "import sys; sys.path.insert(0, 'tests');"
            "from conftest import FakeEncoder, make_library; from pathlib import Path;"
            f"lib = make_library(Path({str(base / 'lib')!r}), FakeEncoder()); lib.index([Path({str(folder)!r})]);"
            "print({d.name: (d.state, d.reason) for d in lib.status().documents})"
        )
        cmd = [sys.executable, "-c", code]
        if os.geteuid() == 0:
            cmd = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *cmd]
        env = dict(os.environ, HOME=str(base))
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
        assert proc.returncode == 0, proc.stderr
        docs = eval(proc.stdout)  # noqa: S307 - our own repr of a dict of strings
        assert docs["ok.md"][0] == "indexed"
        assert docs["locked"][0] == "skipped" and "cannot read" in docs["locked"][1]
    finally:
        os.chmod(base / "docs" / "locked", 0o700)
        shutil.rmtree(base, ignore_errors=True)


def test_pathological_text_indexes_in_bounded_work(tmp_path, library):
    """Inputs that made the old heading and sentence patterns cubic/quadratic (hours)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "heading.md").write_text("# a" + " " * 20000 + "x\n\nBody text about eels.\n")
    (folder / "dots.txt").write_text("." * 300_000 + "\n\nSeals bask on rocks.")
    (folder / "oneline.md").write_text(("word " * 400_000).strip())  # 2 MB, one line
    code = (
        "import sys; sys.path.insert(0, 'tests');"
        "from conftest import FakeEncoder, make_library; from pathlib import Path;"
        f"lib = make_library(Path({str(tmp_path / 'lib2')!r}), FakeEncoder());"
        f"p = lib.index([Path({str(folder)!r})]); print(p.indexed, p.failed)"
    )
    # a hang guard, not a speed claim: the old code needed hours for these
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=240, cwd=ROOT)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["3", "0"]


def test_queries_with_undecodable_bytes_answer_in_json(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("Crazy ones change the world, they say.")
    lib = tmp_path / "lib"
    kb("index", str(folder), lib=lib)
    proc = kb("search", b"crazy \xff ones", "--json", "--mode", "bm25", lib=lib)
    out = json.loads(proc.stdout)
    assert out["state"] in ("ok", "weak") and out["results"][0]["document_name"] == "a.md"
    proc = kb("search", "-- dash first", "--json", "--mode", "bm25", lib=lib)
    assert json.loads(proc.stdout)["state"] in ("ok", "weak", "no_answer")
    # an error is JSON too, and the exit status says it failed
    proc = kb("search", "   ", "--json", lib=lib, check=False)
    assert proc.returncode == 1
    err = json.loads(proc.stdout)
    assert err["state"] == "error" and "empty" in err["error"]


def test_a_lone_surrogate_in_a_query_is_just_a_character(tmp_path, library):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("Alpha and beta are letters.")
    library.index([folder])
    for mode in ("bm25", "dense", "hybrid", "auto"):
        result = library.search("alpha \udcff beta", mode=mode, min_dense=-1)
        assert result.hits and result.hits[0].name == "a.md"


def test_an_edited_document_stays_searchable_until_its_new_version_is_in(tmp_path, library):
    folder = tmp_path / "docs"
    folder.mkdir()
    notes = [folder / f"n{i}.md" for i in range(3)]
    for i, n in enumerate(notes):
        n.write_text(f"Old version {i}: the lighthouse keeper logs storms.")
    library.index([folder])
    for i, n in enumerate(notes):
        n.write_text(f"New version {i}: the lighthouse keeper logs storms and fog.")
    seen: list[int] = []

    def during(p) -> None:
        if p.total and p.done < p.total:
            seen.append(len(library.search("lighthouse keeper storms", mode="bm25").hits))

    library.index([folder], progress=during)
    assert seen and min(seen) == 3, seen  # never fewer than all three documents
    assert all("New version" in h.content
               for h in library.search("lighthouse keeper", mode="bm25").hits)  # fmt: skip
