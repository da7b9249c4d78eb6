"""The library as a state machine: any sequence of what users and other processes do
(write, edit or delete a file, index, remove or add the folder again, another kbapp
process indexing the same library) leaves it consistent, as this process sees it:

- the FTS rows, the searchable chunk ids and the vector cache's labels are the same set;
- every passage is exactly its document's text between its offsets;
- what the library holds is what the folder holds (after an index run);
- the approximate nearest neighbours agree with brute force (recall >= 0.95).
"""

import sqlite3

import numpy as np
from conftest import FakeEncoder, make_library
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

WORDS = ["harbour", "lighthouse", "ferry", "timetable", "boiler", "service", "contractor",
         "budget", "invoice", "garden", "greenhouse", "heater", "april", "oxygen", "warsaw",
         "river", "bridge", "tunnel"]  # fmt: skip
NAMES = ("a.md", "b.md", "c.txt", "notes/d.md", "notes/e.txt")
paragraph = st.lists(st.sampled_from(WORDS), min_size=3, max_size=40).map(
    lambda ws: " ".join(ws).capitalize() + "."
)
document = st.lists(paragraph, min_size=1, max_size=12).map(lambda ps: "\n\n".join(ps) + "\n")


class LibraryMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        import tempfile
        from pathlib import Path

        self.tmp = Path(tempfile.mkdtemp(prefix="kbapp-state-"))
        self.docs = self.tmp / "docs"
        self.docs.mkdir()
        self.lib = make_library(self.tmp / "lib", FakeEncoder(), workers=1)
        self.files: dict[str, str] = {}
        self.registered = False
        self.current = True  # the library has indexed the folder as it stands

    def teardown(self):
        import shutil

        self.lib.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    @rule(name=st.sampled_from(NAMES), text=document)
    def write(self, name, text):
        path = self.docs / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        self.files[name] = text
        self.current = False

    @precondition(lambda self: self.files)
    @rule(data=st.data())
    def delete(self, data):
        name = data.draw(st.sampled_from(sorted(self.files)))
        (self.docs / name).unlink()
        del self.files[name]
        self.current = False

    @rule()
    def index(self):
        self.lib.index([self.docs])
        self.registered, self.current = True, True

    @precondition(lambda self: self.registered)
    @rule()
    def another_process_indexes(self):
        """A second kbapp with its own connections and cache commits; this one follows."""
        other = make_library(self.lib.root, FakeEncoder(), workers=1)
        try:
            other.index([self.docs])
        finally:
            other.close()
        self.current = True

    @precondition(lambda self: self.registered)
    @rule()
    def remove_folder(self):
        self.lib.remove_folder(self.docs)
        self.registered, self.current = False, not self.files

    @invariant()
    def channels_agree(self):
        cached = self.lib.vectors  # follows any other writer first
        db = sqlite3.connect(self.lib.root / "library.db")
        try:
            chunk_ids = {i for (i,) in db.execute(
                "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.doc_id "
                "WHERE d.state = 'indexed' AND c.vector IS NOT NULL")}  # fmt: skip
            fts_ids = {i for (i,) in db.execute("SELECT rowid FROM chunks_fts")}
            assert fts_ids == chunk_ids
            assert set(cached._alive) == chunk_ids
            for content, text, a, b in db.execute(
                "SELECT c.content, t.text, c.char_from, c.char_to FROM chunks c "
                "JOIN texts t ON t.doc_id = c.doc_id"
            ):
                assert content == text[a:b]
            if self.current:
                held = {p for (p,) in db.execute("SELECT path FROM documents WHERE state = 'indexed'")}
                want = {str(self.docs / n) for n in self.files} if self.registered else set()
                assert held == want
            rows = [(i, v) for i, v in db.execute("SELECT id, vector FROM chunks")
                    if i in chunk_ids]  # fmt: skip
        finally:
            db.close()
        if len(rows) >= 5:
            ids = np.array([i for i, _ in rows])
            mat = np.vstack([np.frombuffer(v, dtype=np.float32) for _, v in rows])
            found = total = 0
            for q in mat[:: max(1, len(mat) // 5)][:5]:
                k = min(5, len(ids))
                truth = set(ids[np.argsort(-(mat @ q))[:k]].tolist())
                got = {i for i, _ in cached.query(q, k, None)}
                found += len(truth & got)
                total += k
            assert found / total >= 0.95


LibraryMachine.TestCase.settings = settings(
    max_examples=30, stateful_step_count=12, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)  # fmt: skip
test_library_state = LibraryMachine.TestCase
