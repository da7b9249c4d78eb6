"""The library: `core.Library`, the facade the CLI, the window and the tests use, over the
storage it is kept in (kbapp.store: its writer lock and dense search), the folder list's
copy (`folders`), saved search settings and the gate's thresholds (`settings`), reading
back (`show`) and what it reports about itself (`status`)."""

from ..store.lock import LOCK_FILE
from .core import Library
from .folders import FOLDERS_FILE
from .status import CheckReport, LibraryStatus

__all__ = ["FOLDERS_FILE", "LOCK_FILE", "CheckReport", "Library", "LibraryStatus"]
