"""A team library on Milvus: the whole library (documents, canonical texts, pages, passages
with their dense and sentence vectors, BM25, folders, settings and the calibration) in
Milvus collections, behind the same boundary as the local store (kbapp.store.backend).

`milvus://HOST:PORT/NAME` is a Milvus server (NAME prefixes the collections);
`milvus:///PATH/FILE.db` is a Milvus Lite file (for tests and trials: one process at a time
opens it). Credentials come from KBAPP_MILVUS_TOKEN, or KBAPP_MILVUS_USER with
KBAPP_MILVUS_PASSWORD, or the system keyring (service "kbapp", user = the address); they are
never written anywhere.

BM25 is Milvus's own function (a sparse field computed from text). The text it is given is
the passage's words as the local index cuts and stems them (Unicode words, diacritics
removed, Porter's stemmer: the same rules as SQLite's `porter unicode61` tokenizer), so a
Milvus server and Milvus Lite (whose analyzer does not stem) rank the same words alike.

Milvus has no transactions. A commit writes the document's new passages first and deletes
its old ones after, then bumps the generation; a reader between the two steps may see both
versions of that one document for a moment. One writer at a time: a lease row in the store
(owner, expiry), not a file lock, so two machines indexing one library are kept apart.
"""

from .connection import bm25_text, credentials, forget_client, parse_address, stemmed
from .storage import Lease, MilvusStorage
from .store import MilvusStore

__all__ = ["Lease", "MilvusStorage", "MilvusStore", "bm25_text", "credentials", "forget_client",
           "parse_address", "stemmed"]  # fmt: skip
