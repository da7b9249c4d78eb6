"""A library of look-alike documents (release notes of one product, release after release,
whose headings never say which: only the file name does, by year or by version number): the
question names the release, and the answer comes from that release's notes."""

import pytest
from conftest import make_library

from kbapp.search import engine

CHANGES = [
    "The ferry scheduler now reads timetables from the harbour office every night.",
    "The ferry scheduler now warns the crew when a timetable changes after boarding.",
    "The ferry scheduler now merges the timetables of two harbours into one plan.",
    "The ferry scheduler now prints the timetable for each crew member on boarding.",
]
# Years, and version numbers whose last release shares every digit with the others ("4.4"
# reads as "4" and "4" unless the number is read as one word).
NUMBERINGS = {"years": ["2021", "2022", "2023", "2024"], "versions": ["4.1", "4.2", "4.3", "4.4"]}
# The rest of the library: the product's passenger guides, so that words are as common or
# rare as in a real library, not as in four files.
GUIDES = [
    "The harbour office opens at six and closes at noon on Sundays.",
    "Crew members sign the log before each departure.",
    "Tickets bought online can be refunded until the day before travel.",
    "The cafe on deck two serves soup, sandwiches and coffee.",
    "Bicycles travel free; cars need a vehicle ticket.",
    "In a storm the captain may delay or cancel a crossing.",
]


def _notes(folder, releases):
    """Each release's notes carry the earlier releases' changes forward, as real ones do."""
    folder.mkdir()
    earlier: list[str] = []
    for release, change in zip(releases, CHANGES, strict=True):
        (folder / f"ferrymaster-{release}.md").write_text(
            f"# Ferrymaster release notes\n\n## New in this release\n\n{change}\n\n"
            "## Installing\n\nInstall the package over the previous release; nothing is lost.\n"
            + ("\n## Earlier releases\n\n" + "\n\n".join(earlier) + "\n" if earlier else "")
        )
        earlier.append(f"Since {release}: {change}")
    for n, text in enumerate(GUIDES, start=1):
        (folder / f"passenger-guide-{n}.md").write_text(f"# Passenger guide {n}\n\n{text}\n")


QUESTIONS = [  # (question, the release's place in the numbering)
    ("What did the scheduler gain in Ferrymaster {}?", 0),
    ("What scheduler change came with Ferrymaster {}?", 2),
    ("In Ferrymaster {} what does the scheduler do at boarding?", 3),
    ("How does the Ferrymaster {} scheduler treat timetable changes?", 1),
]


@pytest.fixture(params=list(NUMBERINGS))
def notes(request, tmp_path, real_encoder):
    """(the library, its questions with the release each names)"""
    releases = NUMBERINGS[request.param]
    lib = make_library(tmp_path / "lib", real_encoder)
    _notes(tmp_path / "notes", releases)
    lib.index([tmp_path / "notes"])
    yield lib, [(q.format(releases[k]), releases[k]) for q, k in QUESTIONS]
    lib.close()


@pytest.mark.parametrize("fusion", ["score", "rrf"])
def test_the_first_answer_comes_from_the_release_the_question_names(notes, fusion):
    library, questions = notes
    for question, version in questions:
        top = library.search(question, fusion=fusion).hits[0]
        assert top.path.endswith(f"ferrymaster-{version}.md"), (question, top.path)


def test_without_the_named_document_ranking_some_answers_come_from_another_release(
    notes, monkeypatch
):
    """The test above is not passed by BM25 and the vectors alone."""
    library, questions = notes
    monkeypatch.setattr(engine, "title_ranked", lambda q, order, rows: {})
    wrong = [q for q, v in questions
             if not library.search(q).hits[0].path.endswith(f"ferrymaster-{v}.md")]  # fmt: skip
    assert wrong


def _handbooks(folder, releases):
    """Each release's manual as several documents, one per topic, whose titles are short and
    long: a question names the release and a topic word that the wrong document's title
    holds too."""
    folder.mkdir()
    for release in releases:
        (folder / f"ferrymaster-{release}-scheduler.md").write_text(
            f"# Ferrymaster {release} scheduler\n\nThe scheduler plans every crossing from "
            "the harbour timetables and keeps the plan for a week.\n"
        )
        (folder / f"ferrymaster-{release}-crew-handbook.md").write_text(
            f"# Ferrymaster {release} crew handbook for boarding, shifts and safety drills\n\n"
            f"When the scheduler changes a crossing, release {release} sends every crew "
            "member a text message and a note in the boarding log.\n"
        )
    for n, text in enumerate(GUIDES, start=1):
        (folder / f"passenger-guide-{n}.md").write_text(f"# Passenger guide {n}\n\n{text}\n")


def test_a_long_title_is_named_as_well_as_a_short_one(tmp_path, real_encoder):
    """The question names the release (and the scheduler, which a sibling's title holds):
    every document of that release is named alike, whatever the length of its title, and
    the passages decide among them. (A title named by the share of its own words the
    question holds names the short title and passes over the long one.)"""
    releases = NUMBERINGS["versions"]
    lib = make_library(tmp_path / "lib", real_encoder)
    _handbooks(tmp_path / "books", releases)
    lib.index([tmp_path / "books"])
    try:
        for release in releases:
            q = f"In Ferrymaster {release}, how does the crew learn that the scheduler changed a crossing?"
            top = lib.search(q).hits[0]
            assert top.path.endswith(f"ferrymaster-{release}-crew-handbook.md"), (q, top.path)
    finally:
        lib.close()


def test_a_lone_letter_names_no_title():
    """ "(e.g. images, JavaScript, CSS)" in a title does not make a sentence pasted with
    "e.g." name that document (django-docs: its passages came first, the sentence's own
    passage was ranked out); a word the question shares with the title still names it."""
    from types import SimpleNamespace

    from kbapp.search.named import title_ranked

    titles = ["How to manage static files (e.g. images, JavaScript, CSS)",
              "How to manage error reporting", "Templates API"]  # fmt: skip
    rows = {i: SimpleNamespace(doc_id=i, name=f"doc{i}.pdf", title=t) for i, t in enumerate(titles)}
    order = list(rows)
    assert title_ranked("It can be used as a context manager, e.g.", order, rows) == {}
    assert list(title_ranked("where do static files go, e.g. images", order, rows)) == [0]
