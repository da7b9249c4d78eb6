"""Nothing leaves the machine: index and search with networking disabled for the process."""

import os
import subprocess
import sys
from pathlib import Path

from conftest import SQUAD, make_pdf

BLOCK = """
import socket, sys
class NoNetwork(socket.socket):
    def connect(self, *a, **k):
        raise OSError("network disabled by the test: " + repr(a))
    def connect_ex(self, *a, **k):
        raise OSError("network disabled by the test")
socket.socket = NoNetwork
def refuse(*a, **k):
    raise OSError("network disabled by the test (DNS)")
socket.getaddrinfo = refuse
socket.create_connection = refuse
from kbapp.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


def test_index_and_search_work_with_networking_disabled(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "Oxygen.md").write_bytes((SQUAD / "corpus" / "Oxygen.md").read_bytes())
    lib = tmp_path / "lib"
    for args in (["index", str(docs)], ["search", "What is ozone?", "--json"]):
        proc = subprocess.run(
            [sys.executable, "-c", BLOCK, "--library", str(lib), *args],
            capture_output=True, text=True, timeout=300,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(Path.cwd())},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert "network disabled" not in proc.stderr
    assert '"state"' in proc.stdout and "ozone" in proc.stdout.lower()


def test_no_process_opens_a_network_socket_seen_by_the_kernel(tmp_path):
    """The system-call view: strace follows kbapp and every child (workers, Tesseract)
    through index and search; no connect() or sendto() to any internet address. Socket
    patches cannot see native code (ONNX Runtime's telemetry, for one); this can."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "Oxygen.md").write_bytes((SQUAD / "corpus" / "Oxygen.md").read_bytes())
    make_pdf(docs / "manual.pdf", ["The valve must be closed before the pump starts."] * 3)
    lib = tmp_path / "lib"
    trace = tmp_path / "trace.txt"
    for args in (["index", str(docs)], ["search", "What is ozone?", "--json"]):
        proc = subprocess.run(
            ["strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o", str(trace),
             sys.executable, "-m", "kbapp", "--library", str(lib), *args],
            capture_output=True, text=True, timeout=600, cwd=Path(__file__).resolve().parents[1],
            env=dict(os.environ, HOME=str(tmp_path)),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        calls = trace.read_text()
        assert "strace: " not in proc.stderr or "attach" not in proc.stderr, proc.stderr
        inet = [line for line in calls.splitlines() if "AF_INET" in line or "htons(53)" in line
                or "microsoft" in line]  # fmt: skip
        assert inet == [], inet[:5]
    assert "ozone" in proc.stdout.lower()
