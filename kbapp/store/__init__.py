"""Store: SQLite (source of truth) and the hnswlib vector cache."""

from .db import SCHEMA_VERSION, Store
from .vectors import VectorIndex

__all__ = ["SCHEMA_VERSION", "Store", "VectorIndex"]
