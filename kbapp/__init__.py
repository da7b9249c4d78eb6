"""kbapp: a desktop knowledge base that runs entirely on the user's machine."""

import sys

__version__ = "0.1.0"

# PyMuPDF 2 imports its optional layout analyser (an ONNX model) when it is installed;
# kbapp never calls Page.get_layout(), and loading it costs ~0.7 s and ~50 MB in every
# process (measured: `python -c "import pymupdf"` 1.5-1.8 s / 142 MB, blocked 0.8-0.9 s /
# 89 MB). Blocking the submodule leaves every API kbapp uses unchanged.
sys.modules.setdefault("pymupdf.layout", None)  # type: ignore[arg-type]
