#!/usr/bin/env bash
# Put kbapp in the desktop's launcher (current user): the .desktop file and the icon.
set -euo pipefail
cd "$(dirname "$0")/.."
apps="${XDG_DATA_HOME:-$HOME/.local/share}/applications"
icons="${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/256x256/apps"
mkdir -p "$apps" "$icons"
exe="$(pwd)/dist/kbapp/kbapp"
[ -x "$exe" ] || exe="$(pwd)/.venv/bin/kbapp"
sed "s|^Exec=kbapp|Exec=$exe|" packaging/kbapp.desktop > "$apps/kbapp.desktop"
cp resources/kbapp.png "$icons/kbapp.png"
echo "installed $apps/kbapp.desktop"
