"""Nothing leaves the machine: index and search with networking disabled for the process."""

import subprocess
import sys
from pathlib import Path

from conftest import SQUAD

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
