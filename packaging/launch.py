"""Entry point of the PyInstaller bundle (the same as `python -m kbapp`)."""

import sys

from kbapp.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
