"""Addresses, credentials, the one client per address, limits, and the words BM25 reads."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Iterable
from typing import Any

from ...errors import LibraryError
from ...words import index_words
from ..documents import CHUNK_COLUMNS

log = logging.getLogger(__name__)

SCHEME = "milvus://"
PIECE = 16_000  # characters of a long value per row (a VARCHAR holds 65,535 bytes)
VARCHAR_MAX = 65_535
MAX_ROWS = 16_384  # rows one query may return
WINDOW = 10_000  # ids read per query
LEASE_S = 600.0  # a writer that vanished frees the library after this long
PLACEHOLDER = [0.0, 1.0]  # Milvus wants a vector field in every collection

_DOC_FIELDS = ("name", "title", "kind", "size", "mtime", "content_hash", "reason", "warnings",
               "extractor_version", "pipeline_version", "model", "dims", "pages", "ocr_pages",
               "ocr_confidence", "needs_ocr_pages", "chunks", "split_for_window",
               "header_tokens", "total_tokens", "indexed_at", "updated_at", "retry_after",
               "tries", "first_passage")  # fmt: skip


def current(doc: dict, passage_id: int) -> bool:
    """The passage belongs to the document's current version. Milvus has no transactions, so
    a commit writes the new version's passages and text beside the old ones and then flips
    the document row to them (`first_passage`, `chunks`: the new passages' ids); a reader
    goes by the row and never sees two versions of a document at once. Rows written before
    versions were kept (no `first_passage`) hold one version only."""
    first = doc.get("first_passage")
    return first is None or first <= passage_id < first + int(doc.get("chunks") or 0)


_PASSAGE_DATA = tuple(c for c in CHUNK_COLUMNS if c not in ("seq", "content", "text")) + ("crc",)


def parse_address(address: str) -> tuple[str, str, bool]:
    """(client uri, collection prefix, is Milvus Lite) of a milvus:// address."""
    if not address.startswith(SCHEME):
        raise LibraryError(f"{address} is not a Milvus address (milvus://HOST:PORT/NAME)")
    rest = address[len(SCHEME):]
    if rest.startswith("/"):  # milvus:///path/file.db
        return rest, "kbapp", True
    host, _, name = rest.partition("/")
    name = re.sub(r"\W", "_", name.strip("/")) or "kbapp"
    if not host:
        raise LibraryError(f"{address}: say which server, milvus://HOST:PORT/NAME")
    return f"http://{host}", name, False


def credentials(address: str) -> str:
    """The token the client sends: from the environment, else the system keyring."""
    token = os.environ.get("KBAPP_MILVUS_TOKEN")
    if token:
        return token
    user = os.environ.get("KBAPP_MILVUS_USER")
    password = os.environ.get("KBAPP_MILVUS_PASSWORD")
    if user and password:
        return f"{user}:{password}"
    with contextlib.suppress(Exception):  # no keyring installed, or none configured
        import keyring  # type: ignore[import-not-found]

        secret = keyring.get_password("kbapp", address)
        if secret:
            return secret
    return ""


# -- words as BM25 sees them -------------------------------------------------------------
_stemmer = None
_stem_lock = threading.Lock()


def _stem(words: list[str]) -> list[str]:
    global _stemmer
    with _stem_lock:
        if _stemmer is None:
            import snowballstemmer

            _stemmer = snowballstemmer.stemmer("porter")
        return _stemmer.stemWords(words)


def stemmed(text: str) -> list[str]:
    return _stem(index_words(text))


def bm25_text(text: str) -> str:
    """What Milvus's BM25 function reads of a passage: its stemmed words, in order."""
    out = " ".join(stemmed(text))
    return out.encode("utf-8")[: VARCHAR_MAX - 1].decode("utf-8", "ignore")


_QUOTED = re.compile(r'"([^"]*)"')


# -- the connection ------------------------------------------------------------------------
_CLIENTS: dict[str, Any] = {}
_CLIENTS_LOCK = threading.Lock()


def _client(address: str) -> Any:
    """One client per address in this process (Milvus Lite lets one process open a file)."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(address)
        if client is not None:
            return client
        try:
            from pymilvus import MilvusClient
            # pymilvus logs every failed call before raising it; kbapp says what failed
            logging.getLogger("pymilvus").setLevel(logging.CRITICAL)
        except ImportError as exc:
            raise LibraryError(
                "a team library on Milvus needs kbapp's `team` extra: "
                "pip install 'kbapp[team]' (pymilvus, milvus-lite)"
            ) from exc
        uri, _, lite = parse_address(address)
        try:
            if lite:
                # Milvus Lite's in-process server logs a traceback for each call it does not
                # implement (a timestamp pymilvus asks for while an index is built)
                logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
                os.makedirs(os.path.dirname(uri) or ".", exist_ok=True)
                client = MilvusClient(uri)
            else:
                client = MilvusClient(uri=uri, token=credentials(address), timeout=10)
        except Exception as exc:  # noqa: BLE001 - pymilvus raises many kinds
            text = str(exc)
            if re.search(r"auth|password|credential|denied|unauthenticated", text, re.I):
                why = "the server refused the user name or password (KBAPP_MILVUS_USER, KBAPP_MILVUS_PASSWORD or KBAPP_MILVUS_TOKEN)"
            elif lite:
                why = f"the Milvus Lite file could not be opened ({text}); another kbapp may have it open"
            else:
                why = f"the server could not be reached ({text})"
            raise LibraryError(f"cannot open the team library at {address}: {why}") from exc
        _CLIENTS[address] = client
        return client


def forget_client(address: str) -> None:
    """Close this process's client for an address (tests reopen a Lite file)."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.pop(address, None)
    if client is not None:
        with contextlib.suppress(Exception):
            client.close()


def _in(ids: Iterable[int]) -> str:
    return "[" + ",".join(str(int(i)) for i in ids) + "]"


