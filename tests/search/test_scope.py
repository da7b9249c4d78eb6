"""Narrowing a search, as a user asks for it: a folder, kinds of files, files changed
since a date, "an exact phrase", -words to leave out. Real files, the real model."""

import os
import time

import pytest

from kbapp.config import make_scope
from kbapp.errors import SearchError


@pytest.fixture
def house(tmp_path, real_library):
    home, office = tmp_path / "home", tmp_path / "office"
    home.mkdir()
    office.mkdir()
    (home / "heating.md").write_text(
        "# Heating\n\nThe heat pump in the cellar was replaced in 2021 by a Nibe model.\n\n"
        "## Boiler\n\nThe old oil boiler still heats the sauna; its service is due in March.\n"
    )
    (home / "garden.md").write_text("# Garden\n\nTomatoes need six hours of sun and a heat mat.\n")
    (office / "assets.csv").write_text(
        "Item,Location,Installed\nHeat pump,Server room,2019\nBoiler,Basement,2008\n"
        "Air conditioner,Meeting room,2022\n"
    )
    (office / "old-memo.md").write_text("# Memo\n\nThe heat pump contract with Nibe ended.\n")
    year_ago = time.time() - 400 * 86400
    os.utime(office / "old-memo.md", (year_ago, year_ago))
    real_library.index([home, office])
    return real_library, home, office


def names(result):
    return [h.name for h in result.hits]


def test_a_folder_and_a_kind_narrow_the_search(house):
    lib, home, office = house
    everywhere = lib.search("when was the heat pump replaced")
    assert {"heating.md", "assets.csv"} <= set(names(everywhere))
    at_home = lib.search("when was the heat pump replaced", scope=make_scope(folder=str(home)))
    assert at_home.hits and all(h.path.startswith(str(home) + os.sep) for h in at_home.hits)
    assert at_home.hits[0].name == "heating.md"
    sheets = lib.search("heat pump installed", scope=make_scope(kinds="sheet"))
    assert names(sheets) and set(names(sheets)) == {"assets.csv"}


def test_since_leaves_out_files_not_changed_since(house):
    lib, _, _ = house
    assert "old-memo.md" in names(lib.search("heat pump contract Nibe"))
    recent = lib.search("heat pump contract Nibe", scope=make_scope(since="90d"))
    assert "old-memo.md" not in names(recent)
    with pytest.raises(SearchError, match="write it as 2024-03-01"):
        make_scope(since="last tuesday")


def test_an_exact_phrase_must_stand_and_a_minus_word_must_not(house):
    lib, _, _ = house
    quoted = lib.search('"oil boiler" service')
    assert quoted.state == "ok" and quoted.hits
    assert all("oil boiler" in h.content.lower() for h in quoted.hits)
    without = lib.search("where is the heat pump installed -Nibe")
    assert without.hits and all("nibe" not in h.content.lower() for h in without.hits)
    assert "assets.csv" in names(without) and without.query.endswith("-Nibe")
    absent = lib.search('"geothermal heat pump"')
    assert absent.state == "no_answer"
    assert "no passage that holds \u201cgeothermal heat pump\u201d" in absent.reason
    assert lib.search("-Wall").query == "-Wall"  # a query that starts with a dash is a word


def test_a_scope_nothing_is_in_is_said_plainly(house):
    lib, _, _ = house
    with pytest.raises(SearchError, match="no indexed document is of kind"):
        lib.search("heat pump", scope=make_scope(kinds="slides"))
    with pytest.raises(SearchError, match="unknown kind 'spreadsheet'; choose among pdf, word"):
        make_scope(kinds="spreadsheet")
