"""The form of a text that search compares: compatibility characters folded (NFKC).

PDFs made by LaTeX store ligatures ("ﬁlled", "di ﬀerent"), office files full-width forms and
superscripts. A person types "filled". Both channels compare folded text: BM25 indexes and
queries it, the encoder embeds it. Quoted fragments and their offsets stay exactly the
canonical text; only what is compared is folded.
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[^\W_]+")
_PIECES = re.compile(r"[^\W\d_]+|\d+")


def fold(text: str) -> str:
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text)


def words(text: str) -> list[str]:
    """The folded, lower-cased words of a text, as BM25 splits them."""
    return [w.lower() for w in _WORD.findall(fold(text))]


def pieces(word: str) -> list[str]:
    """The letter and digit runs of a word: "fy2018" -> ["fy", "2018"], "covid19" ->
    ["covid", "19"]; a word of one kind is one piece."""
    return _PIECES.findall(word)
