"""Lay out the US state public capital panel (Munnell 1990; R's Ecdat "Produc": 48 states,
1970-1986) as one statistical profile per state: three A4 pages of tables, all of one
shape, as a yearbook or a company's yearly reports are. Tables are typeset as such reports
print them: numbers right-aligned in their columns, the column headers once at the top,
each row's label once at its left; years down the side (pages 1 and 2) or across the top
(page 3, six years to a table).

    .venv/bin/python resources/eval/state-tables/make_pdfs.py PRODUC_CSV OUT_DIR
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from story_pdf import write_pdf  # noqa: E402

CSS = """body {font-family: serif; font-size: 10pt;} h1 {font-size: 15pt;} h2 {font-size: 12pt;}
td, th {padding: 1px 0 1px 16px; text-align: right;} td.l, th.l {text-align: left; padding-left: 0;}
p.note {font-size: 8pt;}"""

SOURCE = ("Source: A. H. Munnell, \"How does public infrastructure affect regional economic "
          "performance?\", New England Economic Review, 1990; the Ecdat panel \"Produc\".")


def state_name(raw: str) -> str:
    return " ".join(w.capitalize() for w in raw.replace("_", " ").split())


def years_down(title: str, heads: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in heads)
    body = "".join("<tr>" + f"<td class='l'>{r[0]}</td>" + "".join(f"<td>{v}</td>" for v in r[1:])
                   + "</tr>" for r in rows)
    return f"<h2>{title}</h2><table><tr><th class='l'>Year</th>{head}</tr>{body}</table>"


def years_across(title: str, years: list[int], rows: list[tuple[str, list[str]]]) -> str:
    head = "".join(f"<th>{y}</th>" for y in years)
    body = "".join(f"<tr><td class='l'>{label}</td>" + "".join(f"<td>{v}</td>" for v in vals)
                   + "</tr>" for label, vals in rows)
    return f"<h2>{title}</h2><table><tr><th class='l'></th>{head}</tr>{body}</table>"


def pages(name: str, rows: list[dict]) -> list[str]:
    rows = sorted(rows, key=lambda r: int(r["year"]))
    f = lambda v: f"{float(v):,.1f}"  # noqa: E731
    intro = (f"<h1>{name}: public capital, output and employment, 1970-1986</h1>"
             f"<p>This profile of {name} gives the state's stock of public capital by kind, "
             "its private capital stock, its gross state product, its non-agricultural "
             "employment and its unemployment rate for each year from 1970 to 1986. Capital "
             "stocks and output are in millions of 1982 dollars.</p>")
    p1 = intro + years_down(
        f"Table 1. {name}: public capital stock (millions of 1982 dollars)",
        ["Highways and streets", "Water and sewer facilities", "Other public buildings",
         "Total public capital"],
        [[r["year"], f(r["hwy"]), f(r["water"]), f(r["util"]), f(r["pcap"])] for r in rows])
    p2 = years_down(
        f"Table 2. {name}: private capital and output (millions of 1982 dollars)",
        ["Private capital stock", "Gross state product"],
        [[r["year"], f(r["pc"]), f"{int(float(r['gsp'])):,}"] for r in rows])
    p2 += f"<p class='note'>{SOURCE}</p>"
    p3 = ""
    for part, (lo, hi) in enumerate(((1970, 1975), (1976, 1981), (1982, 1986))):
        span = [r for r in rows if lo <= int(r["year"]) <= hi]
        p3 += years_across(
            f"Table 3{'abc'[part]}. {name}: employment and unemployment, {lo}-{hi}",
            [int(r["year"]) for r in span],
            [("Non-agricultural employment (thousands)", [f(r["emp"]) for r in span]),
             ("Unemployment rate (%)", [f(r["unemp"]) for r in span])])
    return [p1, p2, p3 + f"<p class='note'>{SOURCE}</p>"]


def main() -> None:
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    by_state: dict[str, list[dict]] = defaultdict(list)
    with open(src, newline="") as fh:
        for row in csv.DictReader(fh):
            by_state[row["state"]].append(row)
    for raw, rows in sorted(by_state.items()):
        name = state_name(raw)
        stem = "state-" + name.lower().replace(" ", "-")
        write_pdf(pages(name, rows), out / f"{stem}.pdf",
                  f"{name}: public capital, output and employment, 1970-1986", CSS)


if __name__ == "__main__":
    main()
