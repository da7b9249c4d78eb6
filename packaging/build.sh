#!/usr/bin/env bash
# Build dist/kbapp/kbapp (a self-contained Linux bundle) and smoke-test it offscreen.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pip install -q -c constraints.txt "pyinstaller>=6.10"
.venv/bin/pyinstaller --noconfirm --clean --distpath dist --workpath build packaging/kbapp.spec
./dist/kbapp/kbapp --version
tmp=$(mktemp -d)
printf '# Bundle\n\nThe bundled app indexes this note about lanterns.\n' > "$tmp/note.md"
./dist/kbapp/kbapp --library "$tmp/lib" index "$tmp"
./dist/kbapp/kbapp --library "$tmp/lib" search "lanterns" | head -3
QT_QPA_PLATFORM=offscreen timeout 20 ./dist/kbapp/kbapp --library "$tmp/lib" || test $? = 124
echo "bundle OK: $(du -sh dist/kbapp | cut -f1)"
