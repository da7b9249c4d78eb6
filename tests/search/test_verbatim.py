"""Text that is in the library is never refused: a sentence or list item pasted from any
kind of document, and a rare word (a name, an order number) that stands in one, is answered
with its passage in the top 3. And the other way round: a result whose only evidence is one
common word is not shown. Real files of every kind, the real model, a calibrated library
(three squad-public articles around them, as a user's other documents)."""

from __future__ import annotations

import shutil

import pytest
from conftest import SQUAD, make_library, make_pdf, make_scanned_pdf
from office_files import make_docx, make_eml, make_pptx, make_xlsx

from kbapp.evaluate import verbatim
from kbapp.evaluate.metrics import is_hit

ZEN = """Beautiful is better than ugly.
Explicit is better than implicit.
Simple is better than complex.
Errors should never pass silently.
Unless explicitly silenced.
In the face of ambiguity, refuse the temptation to guess.
Now is better than never.
Although never is often better than right now."""

ESSAY = (
    "Every painter knows the fear of the first mark. How else can you stare at an empty "
    "canvas and not think of the hundred pictures it could still become? The answer, "
    "for most of us, is to start with something small and wrong."
)

NOTES = """# Kitchen renovation

- Budget for the contractor is capped at 18,000 euros
- Tiles are ordered from the Zweifachtorus workshop in Graz
- The plumber, Adaeze Okafor, comes on the second Monday
- Paint colour: warm grey, two coats
"""

RECEIPT = [
    "HARDWARE STORE\nOrder number 77-4412\nTile adhesive 3 x 12.50\nTotal 37.50 EUR\n"
    "Thank you for shopping with us"
]

HEATING = (
    "The heat pump in the basement was inspected in October. The next inspection of "
    "the heat pump and the hot water tank is planned for April."
)
BOILERPLATE = (
    "This message was sent from the customer service desk. Please do not reply to "
    "this mailbox: it is not monitored. Service hours are Monday to Friday."
)

MANUAL = (
    "The cache is skipped when you start the interpreter with the -B switch. "
    "Run python3 -m http.server -b 127.0.0.1 to serve this machine only."
)

CODE = '''def reconcile_ledger(entries):
    """Match every payment to its invoice."""
    return [e for e in entries if e.matched]
'''


@pytest.fixture(scope="module")
def home(tmp_path_factory, real_encoder):
    folder = tmp_path_factory.mktemp("docs")
    for name in ("Nikola_Tesla.md", "Oxygen.md", "Warsaw.md"):
        shutil.copy(SQUAD / "corpus" / name, folder / name)
    make_pdf(folder / "zen.pdf", [ZEN, ESSAY])
    make_scanned_pdf(folder / "receipt.pdf", RECEIPT)
    (folder / "renovation.md").write_text(NOTES)
    (folder / "ledger.py").write_text(CODE)
    make_docx(folder / "plan.docx")
    make_xlsx(folder / "budget.xlsx")
    make_pptx(folder / "deck.pptx")
    make_eml(folder / "sauna.eml")
    (folder / "heating.md").write_text(HEATING)
    (folder / "helpdesk.txt").write_text(BOILERPLATE)
    (folder / "manual.txt").write_text(MANUAL)
    lib = make_library(tmp_path_factory.mktemp("lib") / "lib", real_encoder)
    progress = lib.index([folder])
    assert not progress.failed
    yield lib
    lib.close()


def top3(lib, query: str, needle: str | None = None) -> int | None:
    r = lib.search(query)
    assert r.state != "no_answer", f"{query!r} refused: {r.reason}"
    needle = needle or query
    return next(
        (i for i, h in enumerate(r.hits[:3], 1) if is_hit(needle.lower(), h.content.lower())), None
    )


@pytest.mark.parametrize("line", [z for z in ZEN.splitlines() if len(z.split()) >= 4])
def test_lines_of_a_pdf_are_found(home, line):
    assert top3(home, line)


@pytest.mark.parametrize("query, needle", [
    ("how else can you stare at an empty canvas", None),  # PDF, mid-sentence
    ("Budget for the contractor is capped at 18,000 euros", None),  # Markdown bullet
    ("Order number 77-4412", "77-4412"),  # OCR'd scan
    ("77-4412", None),
    ("Okafor", None),  # a name in one document
    ("Zweifachtorus", None),
    ("Supplier delays could push the launch of the kayak line into June", None),  # DOCX
    ("Zookeeper of the penguins", None),  # a sheet row
    ("Herders move the reindeer to summer pastures in May", None),  # a slide
    ("The sauna is heated every Thursday at six", None),  # mail
    ("reconcile_ledger", None),  # a code identifier
    # text pasted with command-line flags: "-B" and "-m" are not words to leave out
    ("The cache is skipped when you start the interpreter with the -B switch", None),
    ("Run python3 -m http.server -b 127.0.0.1 to serve this machine only", None),
])  # fmt: skip
def test_what_stands_in_a_document_is_answered_in_the_top_3(home, query, needle):
    assert top3(home, query, needle), query


def test_a_function_word_is_not_a_word_the_library_never_uses(home):
    r = home.search("how much is the contractor budget")
    assert "much" not in r.unknown_words and r.state != "no_answer"
    assert any("18,000" in h.content for h in r.hits[:3])


def test_one_shared_common_word_is_not_a_result(home):
    """ "when is the next heat pump service due" is answered by the heating note; the
    help-desk boilerplate, which shares only "service", is dropped and counted, not shown.
    Nor does "service hours" bring a history article for its "48 hours"."""
    r = home.search("when is the next heat pump service due")
    assert r.state != "no_answer" and "heat pump" in r.hits[0].content
    assert not any("customer service desk" in h.content for h in r.hits), [h.why for h in r.hits]
    assert r.dropped >= 1
    for h in r.hits:  # every card says why in words
        assert h.why and (h.weak_match or not h.why.startswith("only loosely"))
    r = home.search("Service hours")
    assert "customer service desk" in r.hits[0].content
    assert not any("48 hours" in h.content for h in r.hits)
    # and a question about what the library does not hold is refused, junk and all
    assert home.search("when is the next boiler service due").state == "no_answer"


def test_similarity_alone_in_the_weak_band_is_not_an_answer(home):
    """ "What do we inhale to live?" is closest to the oxygen article, in none of its
    words. With the floor under that similarity and the weak mark over it, the passage is a
    neighbouring topic, not an answer: refused, and the reason says why in words. Past the
    weak mark, similarity answers alone."""
    q = "What do we inhale to live?"
    probe = home.search(q, min_dense=-1.0, weak_dense=-1.0)  # every candidate shown
    best, raise_ = probe.best_dense, probe.required - probe.floor
    assert probe.hits and not probe.hits[0].matched and "Oxygen" in probe.hits[0].name
    floor = best - raise_ - 0.03  # the question's required floor is 0.03 under its best
    r = home.search(q, min_dense=floor, weak_dense=best + 0.03)
    assert r.state == "no_answer" and r.closest is not None and not r.closest.matched
    assert "shares none of the question's words" in r.reason, r.reason
    assert home.search(q, min_dense=floor, weak_dense=best - 0.01).state != "no_answer"


def test_off_topic_questions_stay_refused(home):
    for q in ("Who won the 1998 football world cup final?",
              "What is the recommended dose of ibuprofen for children?"):  # fmt: skip
        assert home.search(q).state == "no_answer", q


def test_sampled_sentences_and_rare_words_are_found(home):
    """The property over the whole library, as `python -m kbapp.evaluate.verbatim` measures
    it on the development libraries: sampled sentences and rare words come back."""
    report = verbatim.run(home, verbatim.sample(home, sentences=40, rare_words=40, seed=1))
    for kind in ("sentence", "word"):
        assert report[kind]["n"] >= 30
        assert report[kind]["refused"] <= 0.03, report[kind]["misses"]
        assert report[kind]["top3"] >= 0.9, report[kind]["misses"]
