"""kbapp: a desktop knowledge base that runs entirely on the user's machine."""

import os
import sys

__version__ = "0.1.0"

# PyMuPDF 2 imports its optional layout analyser (an ONNX model) when it is installed;
# kbapp never calls Page.get_layout(), and loading it costs ~0.7 s and ~50 MB in every
# process (measured: `python -c "import pymupdf"` 1.5-1.8 s / 142 MB, blocked 0.8-0.9 s /
# 89 MB). Blocking the submodule leaves every API kbapp uses unchanged.
sys.modules.setdefault("pymupdf.layout", None)  # type: ignore[arg-type]
# PyMuPDF 2 also imports pymupdf4llm (Markdown export, never used here), which imports
# ONNX Runtime: 0.28 s per process, and ONNX Runtime's native telemetry client resolves
# mobile.events.data.microsoft.com at start (seen with strace). Nothing leaves the
# machine: the submodule is blocked and ONNX Runtime's telemetry is off for this process
# and its children before anything can import it (kbapp's own ONNX encoder included).
sys.modules.setdefault("pymupdf4llm", None)  # type: ignore[arg-type]
os.environ["ORT_DISABLE_TELEMETRY"] = "1"
