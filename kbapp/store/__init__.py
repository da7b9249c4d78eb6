"""Store: SQLite (source of truth) and the hnswlib vector cache. The only code that runs SQL.

- db.py: the connection (WAL, atomic(), schema version, ordered migrations, meta).
- documents.py, folders.py, chunks.py: one small repository per table family, typed.

sqlite-utils is used where it fits: single-row inserts, updates and upserts of documents
and meta (`Table.insert/update/upsert`, which nest inside atomic() as savepoints). The
hot paths (chunk and FTS inserts of a commit, search reads, the BM25 MATCH) are plain
parameterised SQL: they run per chunk or per query, and FTS5's bm25() and MATCH have no
sqlite-utils form. The schema stays an ordered list of migrations (db.py) rather than
`create()`/`transform()` calls, so a shipped step can never change under an old library.
"""

from .chunks import ChunkRow, Chunks
from .db import SCHEMA_VERSION, Store
from .documents import DocumentRow, Documents, Known
from .folders import Folders
from .vectors import VectorIndex

__all__ = [
    "SCHEMA_VERSION", "ChunkRow", "Chunks", "DocumentRow", "Documents", "Folders", "Known",
    "Store", "VectorIndex",
]  # fmt: skip
