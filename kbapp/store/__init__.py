"""Store: where a library is kept, behind one boundary (backend.py): SQLite (the source of
truth) with the hnswlib vector cache (local.py, the default), or Milvus (milvus/, a team
library). The only code that runs SQL or talks to Milvus.

- db.py: the connection (WAL, atomic(), schema version, ordered migrations, meta).
- documents.py, folders.py, chunks.py: one small repository per table family, typed.

sqlite-utils is used where it fits: single-row inserts, updates and upserts of documents
and meta (`Table.insert/update/upsert`, which nest inside atomic() as savepoints). The
hot paths (chunk and FTS inserts of a commit, search reads, the BM25 MATCH) are plain
parameterised SQL: they run per chunk or per query, and FTS5's bm25() and MATCH have no
sqlite-utils form. The schema stays an ordered list of migrations (db.py) rather than
`create()`/`transform()` calls, so a shipped step can never change under an old library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .backend import Backend, Storage
from .chunks import ChunkRow, Chunks
from .db import SCHEMA_VERSION, Store
from .documents import DocumentRow, Documents, Known
from .folders import Folders
from .local import LocalStorage
from .vectors import VectorIndex

if TYPE_CHECKING:
    from ..config import Settings

__all__ = [
    "SCHEMA_VERSION", "Backend", "ChunkRow", "Chunks", "DocumentRow", "Documents", "Folders",
    "Known", "LocalStorage", "Storage", "Store", "VectorIndex", "open_storage",
]  # fmt: skip


def open_storage(settings: Settings) -> Storage:
    """The storage a library's settings name: a Milvus address, or a folder here."""
    if settings.remote is not None:
        from .milvus import MilvusStorage  # the team extra: imported only when asked for

        return MilvusStorage(settings.remote)
    return LocalStorage(settings.library)
