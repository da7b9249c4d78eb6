#!/usr/bin/env bash
# Builds this set's corpus into corpus/: four releases of Django's documentation (the
# sdists from PyPI, pip download; nothing is installed in the project's venv), built to HTML
# with Sphinx in a throwaway venv, then laid out as PDFs by make_pdfs.py with PyMuPDF (the
# project's venv). About 15 minutes on two cores; run from anywhere.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${PYTHON:-$here/../../../.venv/bin/python}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
python3 -m venv sv
sv/bin/pip install -q sphinx
for v in 3.2.25 4.0.10 4.2.16 5.1.3; do
  "$py" -m pip download -q --no-deps --no-binary :all: -d . "django==$v"
  tar xzf "Django-$v.tar.gz"
  (cd "Django-$v/docs" && ../../sv/bin/sphinx-build -q -j 2 -b html . "../../html-$v" >/dev/null 2>&1)
  "$py" "$here/make_pdfs.py" "html-$v" "${v%.*}" "$here/corpus"
done
ls "$here/corpus" | wc -l
