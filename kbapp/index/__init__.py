"""Indexing: `scan` (which files, what to read), `workers` (extraction and chunking in
worker processes), `job` (the run: batches across documents, progress), `commit` (one
document in, out or emptied, in one transaction), `progress` (counts and the ETA)."""

from .commit import retry_columns
from .job import PIPELINE_BASE, IndexJob
from .progress import Progress, ProgressFn
from .scan import Skipped, is_ignored, walk_files
from .target import Target
from .workers import default_workers

__all__ = [
    "PIPELINE_BASE", "IndexJob", "Progress", "ProgressFn", "Skipped", "Target",
    "default_workers", "is_ignored", "retry_columns", "walk_files",
]  # fmt: skip
