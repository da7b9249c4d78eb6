import subprocess
import sys


def test_engine_imports_no_qt():
    code = (
        "import sys; import kbapp.library, kbapp.cli, kbapp.evaluate.runner, kbapp.evaluate.bench; "
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'PyQt'))]; "
        "sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
