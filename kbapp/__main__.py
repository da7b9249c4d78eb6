"""`python -m kbapp` and the `kbapp` command: a subcommand runs the CLI, none opens the window."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from .cli import main as cli_main

    return cli_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    import multiprocessing

    multiprocessing.freeze_support()  # extraction workers inside a PyInstaller bundle
    sys.exit(main())
