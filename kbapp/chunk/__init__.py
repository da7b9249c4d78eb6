"""Chunk: one document's canonical text into passages with offsets (`prose` for text,
`code` for source files); `sentences` finds sentence ends and the sentences a passage
embeds on its own; `base` holds what they share."""

from .base import DEFAULT_OPTIONS, MIN_WORDS, Chunk, Chunked, TokenCounter, thin
from .code import chunk_code, identifier_parts
from .prose import chunk_document
from .sentences import sentence_spans, sentence_texts

__all__ = [
    "DEFAULT_OPTIONS", "MIN_WORDS", "Chunk", "Chunked", "TokenCounter", "chunk_code",
    "chunk_document", "identifier_parts", "sentence_spans", "sentence_texts", "thin",
]  # fmt: skip
