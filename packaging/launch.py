"""Entry point of the PyInstaller bundle (the same as `python -m kbapp`)."""

import sys

from kbapp.__main__ import main

if __name__ == "__main__":
    import multiprocessing

    multiprocessing.freeze_support()  # extraction workers re-enter here in a bundle
    sys.exit(main())
