"""Search: dense (hnswlib), BM25 (FTS5), hybrid (both channels' scores fused, or RRF on
request), auto (router), rerank, gate."""

from .engine import Searcher, clean_query
from .result import Hit, SearchResult

__all__ = ["Hit", "SearchResult", "Searcher", "clean_query"]
