"""The team library on Milvus, exercised on a real Milvus Lite file (no mock): the same
verbs, citations and gate as the local library, a writer lease, a clear error for another
model's collection and for a server that cannot be reached, and shared-folder paths."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest
from conftest import FakeEncoder, make_library, make_pdf

from kbapp.config import load_settings, parse_path_map
from kbapp.errors import KbError, LibraryBusy, LibraryError
from kbapp.library import Library
from kbapp.store.milvus import bm25_text, forget_client, parse_address


@pytest.fixture
def address(tmp_path):
    addr = f"milvus://{tmp_path}/team.db"
    yield addr
    forget_client(addr)


@pytest.fixture
def docs(tmp_path):
    d = tmp_path / "share"
    d.mkdir()
    (d / "plans.md").write_text(
        "# Plans\n\n- Budget for the contractor is capped at 18,000 euros\n"
        "- The boiler service is due in March\n\nOkafor signed order 77-4412.\n"
    )
    make_pdf(d / "zen.pdf", ["Beautiful is better than ugly.\nExplicit is better than implicit.",
                             "Now is better than never.\nAlthough never is often better than right now."])  # fmt: skip
    return d


def test_a_team_library_indexes_searches_and_cites_like_a_local_one(address, docs, tmp_path):
    team = make_library(address, FakeEncoder())
    local = make_library(tmp_path / "local", FakeEncoder())
    for lib in (team, local):
        done = lib.index([docs])
        assert (done.indexed, done.failed) == (2, 0)
    assert team.storage.kind == "milvus" and team.status().library == address
    for q in ["now is better than never", "Okafor", "contractor budget", "77-4412"]:
        a, b = team.search(q), local.search(q)
        assert a.state == b.state != "no_answer"
        assert [(h.name, h.page_from, h.char_from) for h in a.hits] == \
               [(h.name, h.page_from, h.char_from) for h in b.hits]  # fmt: skip
    hit = team.search("now is better than never").hits[0]
    assert hit.name == "zen.pdf" and hit.page_from == 2
    assert "Now is better than never" in team.show(f"{hit.path}#char={hit.char_from},{hit.char_to}")
    assert team.check().ok


def test_an_edit_and_a_deletion_reach_the_team_library(address, docs):
    lib = make_library(address, FakeEncoder())
    lib.index([docs])
    (docs / "plans.md").write_text("# Plans\n\nThe heat pump replaces the boiler in June.\n")
    time.sleep(0.01)
    (docs / "zen.pdf").unlink()
    done = lib.index()
    assert done.removed == 1
    assert [d.name for d in lib.status().documents] == ["plans.md"]
    assert lib.search("heat pump replaces the boiler").hits[0].name == "plans.md"
    assert lib.search("Okafor", mode="bm25").state == "no_answer"
    # nothing of the deleted document or the old version is left to quote
    assert sorted(lib.store.chunks.all_contents()) == sorted(
        h.content for h in lib.search("heat pump", top_k=50).hits)


def test_the_library_survives_reopening(address, docs):
    lib = make_library(address, FakeEncoder())
    lib.index([docs])
    forget_client(address)  # as a new process would find it
    again = make_library(address, FakeEncoder())
    assert [str(p) for p in again.folder_paths()] == [str(docs)]
    assert again.search("now is better than never").hits[0].page_from == 2
    assert again.index().unchanged == 2  # nothing is read again


def test_one_writer_at_a_time_by_a_lease_in_the_store(address, docs):
    first = make_library(address, FakeEncoder())
    other = make_library(address, FakeEncoder())  # another writer (another desktop)
    with first.writer(), pytest.raises(LibraryBusy, match="being indexed by"):
        other.index([docs])
    assert other.index([docs]).indexed == 2  # the lease was given back


def test_a_collection_made_by_another_model_is_refused_with_the_reason(address, docs):
    make_library(address, FakeEncoder()).index([docs])

    class Wider(FakeEncoder):
        name, dims = "fake-hash-32", 32

        def encode(self, texts, batch_size=32):
            return super().encode(texts)[:, :32] / np.sqrt(2)

    with pytest.raises(LibraryError, match="64-dimensional vectors made by the model fake-hash-64; this kbapp uses fake-hash-32"):
        make_library(address, Wider()).index([docs])


def test_an_unreachable_server_is_a_sentence_not_a_traceback():
    with pytest.raises(LibraryError, match="could not be reached"):
        Library.open("milvus://127.0.0.1:9/team").status()


def test_addresses_and_the_missing_extra_are_explained():
    assert parse_address("milvus://db.lab:19530/legal") == ("http://db.lab:19530", "legal", False)
    assert parse_address("milvus:///srv/k/team.db")[2] is True
    with pytest.raises(LibraryError, match="say which server"):
        parse_address("milvus:///")[0] and parse_address("milvus://")
    assert bm25_text("Errors should never pass silently; Café!") == "error should never pass silent cafe"


def test_shared_folders_open_where_this_machine_mounts_them(address, docs, tmp_path):
    make_library(address, FakeEncoder()).index([docs])
    desktop = tmp_path / "mnt" / "share"
    mapping = parse_path_map(f"{docs}={desktop}")
    lib = Library(replace(load_settings(address), path_map=mapping), FakeEncoder())
    hit = lib.search("now is better than never").hits[0]
    assert hit.path == str(desktop / "zen.pdf")
    with pytest.raises(KbError, match="FOLDER_ON_THE_INDEXER=FOLDER_HERE"):
        parse_path_map("/srv/share")


def test_a_mistyped_team_library_name_is_refused_and_nothing_is_made(address, docs):
    make_library(address, FakeEncoder()).index([docs])
    wrong = address.replace("team.db", "tema.db")
    try:
        with pytest.raises(LibraryError, match="there is no library at"):
            Library.open(wrong, create=False)
        from kbapp.store.milvus.connection import _client

        assert not _client(wrong).has_collection("kbapp_documents")
    finally:
        forget_client(wrong)
    assert Library.open(address, create=False, encoder=FakeEncoder()).search("Okafor").hits


def test_a_reader_follows_the_writers_commits(address, docs):
    writer = make_library(address, FakeEncoder())
    writer.index([docs])
    reader = make_library(address, FakeEncoder())  # a desktop that only searches
    assert reader.search("heat pump", mode="bm25").state == "no_answer"
    (docs / "pump.md").write_text("# Pump\n\nThe heat pump replaces the boiler in June.\n")
    writer.index()
    hit = reader.search("heat pump", mode="bm25").hits[0]
    assert hit.name == "pump.md"
    assert reader.status().documents[1].name == "pump.md"


def test_rebuild_reads_a_team_library_again_keeping_its_folders(address, docs):
    lib = make_library(address, FakeEncoder())
    lib.index([docs])
    done = lib.rebuild()
    assert (done.indexed, done.failed) == (2, 0)
    assert [str(p) for p in lib.folder_paths()] == [str(docs)]
    assert lib.search("now is better than never").hits[0].page_from == 2


def test_bench_measures_a_team_library_beside_the_local_one(address, docs, tmp_path):
    """`kbapp bench --store`: the same corpus indexed into the team library in the same run,
    the same passages, and every search mode measured on it with the real model."""
    from kbapp.evaluate.bench import _index_once, _team

    local, *_ = _index_once(docs, tmp_path / "local")
    chunks = len(local.store.chunks.all_texts())
    local.close()
    out = _team(docs, address, ["contractor budget", "Okafor"], chunks)
    assert out["indexing"]["chunks"] == chunks and out["indexing"]["documents"] == 2
    assert set(out["search_ms"]) == {"dense", "bm25", "hybrid", "auto"}
    assert all(m["n"] == 2 for m in out["search_ms"].values())
    with pytest.raises(KbError, match="already holds passages"):  # never a library in use
        _team(docs, address, ["Okafor"], chunks)


def test_bench_refuses_a_store_that_is_not_a_team_library(tmp_path, capsys):
    from kbapp.cli import main

    assert main(["bench", str(tmp_path), "--store", str(tmp_path / "x")]) != 0
    assert "team library's address" in capsys.readouterr().err


def test_a_reader_never_sees_two_versions_of_a_document_being_committed(address, docs, monkeypatch):
    """Milvus has no transactions: while the writer commits an edit, a desktop searching the
    library sees the old version or the new one, each passage once and its citation quoting
    the text it came from, never both versions side by side; a writer stopped half-way
    leaves the new version searchable and its next commit removes what is left of the old."""
    from kbapp.store.milvus import documents as mdocs

    writer = make_library(address, FakeEncoder())
    writer.index([docs])
    reader = make_library(address, FakeEncoder())
    seen: list[list[str]] = []

    def look() -> None:
        hits = reader.search("contractor budget boiler service", mode="bm25", top_k=50).hits
        seen.append([h.content for h in hits if h.name == "plans.md"])
        for h in hits:  # what a click opens is what the card shows
            assert h.content in reader.show(f"{h.path}#char={h.char_from},{h.char_to}")

    store_cls = type(writer.store.chunks.store)
    real_put = store_cls.put_long

    def put_long(self, kind, doc_id, value, version=None):  # new passages are in, row not yet
        if kind == "text":
            look()
        return real_put(self, kind, doc_id, value, version)

    real_remove = mdocs.MilvusDocuments._remove_content

    def stopped(self, doc_id, keep=None):  # the row flipped; the writer dies before cleaning
        if keep is not None:
            look()
            raise KeyboardInterrupt
        return real_remove(self, doc_id, keep)

    monkeypatch.setattr(store_cls, "put_long", put_long)
    monkeypatch.setattr(mdocs.MilvusDocuments, "_remove_content", stopped)
    (docs / "plans.md").write_text("# Plans\n\n- Budget for the contractor is capped at 21,000 euros\n"
                                   "- The boiler service is due in April\n")  # fmt: skip
    time.sleep(0.01)
    with pytest.raises(KeyboardInterrupt):
        writer.index()
    before, after = seen
    assert before and all("18,000" in c or "March" in c or "Okafor" in c for c in before)
    assert after and all("21,000" in c or "April" in c for c in after)
    assert not any("18,000" in c for c in after) and len(after) == len(set(after))
    monkeypatch.undo()
    writer.close()

    def stored() -> int:  # every passage row, reachable or not
        store = reader.store.chunks.store
        return len(store.query(store.passages_name, "id >= 0", ["id"]))

    assert stored() > len(reader.store.chunks.all_contents())  # the old version is left
    writer = make_library(address, FakeEncoder())
    writer.index([docs])  # the next writer tidies what the stopped one left
    contents = writer.store.chunks.all_contents()
    assert any("21,000" in c for c in contents) and not any("18,000" in c for c in contents)
    assert stored() == len(contents)
