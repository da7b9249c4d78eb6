"""A library of look-alike documents (release notes of one product, year after year): the
question names the release, and the answer comes from that release's notes."""

import pytest
from conftest import make_library

from kbapp.search import engine

CHANGES = {
    "4.1": "The ferry scheduler now reads timetables from the harbour office every night.",
    "4.2": "The ferry scheduler now warns the crew when a timetable changes after boarding.",
    "4.3": "The ferry scheduler now merges the timetables of two harbours into one plan.",
    "4.4": "The ferry scheduler now prints the timetable for each crew member on boarding.",
}


def _notes(folder):
    """Each release's notes carry the earlier releases' changes forward, as real ones do."""
    folder.mkdir()
    earlier: list[str] = []
    for version, change in CHANGES.items():
        (folder / f"ferrymaster-{version}.md").write_text(
            f"# Ferrymaster {version} release notes\n\n## New in this release\n\n{change}\n\n"
            "## Installing\n\nInstall the package over the previous release; nothing is lost.\n"
            + ("\n## Earlier releases\n\n" + "\n\n".join(earlier) + "\n" if earlier else "")
        )
        earlier.append(f"Since {version}: {change}")


@pytest.fixture
def notes_library(tmp_path, real_encoder):
    lib = make_library(tmp_path / "lib", real_encoder)
    _notes(tmp_path / "notes")
    lib.index([tmp_path / "notes"])
    yield lib
    lib.close()


QUESTIONS = [
    ("What did the scheduler gain in Ferrymaster 4.1?", "4.1"),
    ("What scheduler change came with Ferrymaster 4.3?", "4.3"),
    ("In Ferrymaster 4.4 what does the scheduler do at boarding?", "4.4"),
    ("How does the Ferrymaster 4.2 scheduler treat timetable changes?", "4.2"),
]


def test_the_first_answer_comes_from_the_release_the_question_names(notes_library):
    for question, version in QUESTIONS:
        top = notes_library.search(question).hits[0]
        assert top.path.endswith(f"ferrymaster-{version}.md"), (question, top.path)


def test_without_the_named_document_ranking_some_answers_come_from_another_release(
    notes_library, monkeypatch
):
    """The test above is not passed by BM25 and the vectors alone."""
    monkeypatch.setattr(engine, "_title_ranked", lambda q, order, rows: [])
    wrong = [q for q, v in QUESTIONS
             if not notes_library.search(q).hits[0].path.endswith(f"ferrymaster-{v}.md")]  # fmt: skip
    assert wrong
