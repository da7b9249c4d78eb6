#!/usr/bin/env bash
# Fetches this set's corpus into corpus/: five PDF manuals from Debian packages (apt-get
# download; nothing is installed). Run from anywhere; needs apt and dpkg.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
apt-get download lilypond-doc-pdf python-reportlab-doc auto-multiple-choice-doc-pdf
for deb in *.deb; do dpkg -x "$deb" x; done
mkdir -p "$here/corpus"
doc=x/usr/share/doc
cp "$doc"/lilypond/html/Documentation/{usage,extending,changes}.pdf \
   "$doc"/python-reportlab-doc/reportlab-userguide.pdf \
   "$doc"/auto-multiple-choice/auto-multiple-choice.en.pdf "$here/corpus/"
ls -l "$here/corpus"
