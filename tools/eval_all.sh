#!/usr/bin/env bash
# Every number in docs/EVALUATION.md: run from the repository root after `make setup`.
set -euo pipefail
SET=${SET:-resources/eval/squad-public}
OUT=${OUT:-docs/eval}
LIB=${LIB:-$(mktemp -d)/lib}
mkdir -p "$OUT"
kb() { .venv/bin/kbapp --library "$LIB" eval "$SET/corpus" "$SET/golden.jsonl" "$@"; }
kb --compare default blind --json "$OUT/boundaries-vs-blind.json" > "$OUT/boundaries-vs-blind.txt"
kb --compare default noheader --json "$OUT/header-vs-noheader.json" > "$OUT/header-vs-noheader.txt"
kb --compare default overlap --json "$OUT/nooverlap-vs-overlap.json" > "$OUT/nooverlap-vs-overlap.txt"
kb --compare hybrid dense --json "$OUT/hybrid-vs-dense.json" > "$OUT/hybrid-vs-dense.txt"
kb --compare hybrid bm25 --json "$OUT/hybrid-vs-bm25.json" > "$OUT/hybrid-vs-bm25.txt"
kb --compare auto-hybrid auto-dense --json "$OUT/auto-hybrid-vs-auto-dense.json" > "$OUT/auto-hybrid-vs-auto-dense.txt"
kb --config default --per-query --json "$OUT/default.json" > "$OUT/default.txt"
