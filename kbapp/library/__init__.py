"""The library: `core.Library`, the facade the CLI, the window and the tests use, over the
writer lock (`writer`), the vector cache (`cache`), the folder list's copy (`folders`),
saved search settings and the gate's thresholds (`settings`), reading back (`show`) and
what it reports about itself (`status`)."""

from .core import Library
from .folders import FOLDERS_FILE
from .status import CheckReport, LibraryStatus
from .writer import LOCK_FILE

__all__ = ["FOLDERS_FILE", "LOCK_FILE", "CheckReport", "Library", "LibraryStatus"]
