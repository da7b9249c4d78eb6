"""The viewer opens each format at its locator: a spreadsheet as its table with the cited
cells highlighted, code with line numbers and the cited lines, a slide's text."""

import pytest
from office_files import make_all

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from kbapp.gui.viewer import SourceViewer  # noqa: E402


@pytest.fixture
def viewer(qtbot, tmp_path, library):
    make_all(tmp_path / "office")
    library.index([tmp_path / "office"])
    v = SourceViewer()
    qtbot.addWidget(v)
    v.resize(700, 500)
    v.show()
    return v, library


def hit_in(library, query, name):
    return next(h for h in library.search(query, mode="bm25").hits if h.name == name)


def test_a_sheet_citation_shows_the_table_with_the_cited_cells(viewer):
    v, lib = viewer
    hit = hit_in(lib, "penguins zookeeper", "budget.xlsx")
    v.show_hit(lib, hit)
    assert v.stack.currentWidget() is v.table
    assert v.table.horizontalHeaderItem(0).text() == "A"
    row = next(r for r in range(v.table.rowCount())
               if v.table.item(r, 1) and "penguins" in v.table.item(r, 1).text())  # fmt: skip
    assert (row + 1, 2) in v.highlighted  # the cell with the answer is highlighted
    assert "Staff list!A" in v.title.text()


def test_a_slide_citation_shows_its_text_with_the_passage_highlighted(viewer):
    v, lib = viewer
    hit = hit_in(lib, "summer pastures", "deck.pptx")
    v.show_hit(lib, hit)
    assert v.stack.currentWidget() is v.text  # not handed to the PDF renderer
    a, b = v.highlighted[0]
    assert "summer pastures" in v.text.toPlainText()[a:b]
    assert "slide 2" in v.title.text()


def test_a_code_citation_shows_line_numbers_and_the_cited_lines(viewer):
    v, lib = viewer
    hit = hit_in(lib, "handleAuthCallback", "sessions.py")
    v.show_hit(lib, hit)
    assert v.stack.currentWidget() is v.code
    assert v.code.gutter.width() > 0
    a, b = v.highlighted[0]
    assert "def handleAuthCallback" in v.code.toPlainText()[a:b]
    assert f"lines {hit.line_from}–{hit.line_to}" in v.title.text()
