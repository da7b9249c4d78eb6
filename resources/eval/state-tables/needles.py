"""Writes golden.jsonl for state-tables: 60 analyst questions drawn at random (seed
20261207) over the 48 states, the 17 years and the six kinds of figure, each naming its
state and year, with the printed row as the needle (the year or label and the figures up to
the one asked; the employment row's figures alone), and 10 off-topic questions.

    python3 needles.py PRODUC_CSV > golden.jsonl
"""

from __future__ import annotations

import csv
import json
import random
import sys
from collections import defaultdict

ONE = lambda v: f"{float(v):,.1f}"  # noqa: E731
# (column, page, table columns in print order, question forms)
FIGURES = [
    ("hwy", 1, ["hwy"], ["What was {s}'s public capital stock in highways and streets in {y}?",
                         "{s}, {y}: highways and streets capital stock"]),
    ("water", 1, ["hwy", "water"], ["How much public capital did {s} have in water and sewer facilities in {y}?",
                                    "value of {s} water and sewer facilities {y}"]),
    ("util", 1, ["hwy", "water", "util"], ["{s} other public buildings capital stock in {y}",
                                           "In {y}, what was the stock of other public buildings in {s}?"]),
    ("pcap", 1, ["hwy", "water", "util", "pcap"], ["What was the total public capital of {s} in {y}?",
                                                   "{s} total public capital {y}, millions of 1982 dollars"]),
    ("pc", 2, ["pc"], ["What was the private capital stock of {s} in {y}?",
                       "{s} {y} private capital stock"]),
    ("gsp", 2, ["pc", "gsp"], ["What was {s}'s gross state product in {y}?",
                               "gross state product of {s} in {y}"]),
    ("emp", 3, None, ["How many people held non-agricultural jobs in {s} in {y} (thousands)?",
                      "{s} non-agricultural employment {y}"]),
    ("unemp", 3, None, ["What was the unemployment rate in {s} in {y}?",
                        "{s} unemployment rate {y}"]),
]
# A wrapped "Non-agricultural" prints as "Non-" over "agricultural" and reads back as the
# word broken at a line end: that row's needle is its figures alone.
LABELS = {"emp": "", "unemp": "Unemployment rate (%)"}
SPANS = ((1970, 1975), (1976, 1981), (1982, 1986))
OFF_TOPIC = [
    "What is the melting point of tungsten?",
    "Who wrote the novel Middlemarch?",
    "How do I reset the admin password of a Django site?",
    "What was the average rainfall in Seattle in 1983?",
    "Which team won the 1982 FIFA World Cup?",
    "How many moons does Neptune have?",
    "What is the boiling point of ethanol at sea level?",
    "What was the population of Tokyo in 1980?",
    "How do I convert a PDF to text on Linux?",
    "What is the half-life of carbon-14?",
]


def state_name(raw: str) -> str:  # as make_pdfs.py names it
    return " ".join(w.capitalize() for w in raw.replace("_", " ").split())


def cell(r: dict, col: str) -> str:
    return f"{int(float(r[col])):,}" if col == "gsp" else ONE(r[col])


def main() -> None:
    by: dict[tuple[str, int], dict] = {}
    states: dict[str, list[int]] = defaultdict(list)
    with open(sys.argv[1], newline="") as fh:
        for r in csv.DictReader(fh):
            by[(r["state"], int(r["year"]))] = r
            states[r["state"]].append(int(r["year"]))
    rng = random.Random(20261207)
    names = sorted(states)
    n = 0
    for i in range(60):
        col, page, cols, forms = FIGURES[i % len(FIGURES)]
        raw = rng.choice(names)
        year = rng.randint(1970, 1986)
        r = by[(raw, year)]
        name = state_name(raw)
        if cols is not None:
            needle = " ".join([str(year)] + [cell(r, c) for c in cols])
        else:
            lo, _ = next(s for s in SPANS if s[0] <= year <= s[1])
            needle = " ".join([LABELS[col]] + [cell(by[(raw, y)], col) for y in range(lo, year + 1)]).strip()
        query = rng.choice(forms).format(s=name, y=year)
        stem = "state-" + name.lower().replace(" ", "-")
        print(json.dumps({"id": f"s{n:02d}", "query": query[0].upper() + query[1:],
                          "needle": needle, "doc": stem, "pages": [page]}))
        n += 1
    for q in OFF_TOPIC:
        print(json.dumps({"id": f"s{n:02d}", "query": q, "needle": None}))
        n += 1


if __name__ == "__main__":
    main()
