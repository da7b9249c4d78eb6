#!/usr/bin/env bash
# Builds this set's corpus into corpus/: Python's "What's New" pages from Debian's
# python3.11-doc (apt-get download; nothing is installed), laid out as PDFs by
# make_pdfs.py with PyMuPDF (the project's venv). Run from anywhere; needs apt and dpkg.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${PYTHON:-$here/../../../.venv/bin/python}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
apt-get download python3.11-doc
dpkg -x python3.11-doc_*.deb x
"$py" "$here/make_pdfs.py" x/usr/share/doc/python3.11/html/whatsnew "$here/corpus"
ls -l "$here/corpus"
