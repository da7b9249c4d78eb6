"""Words: the one place text is split into words, and the form search compares.

`fold` and `words` are what BM25 indexes and queries, what the gate weighs and what the
window bolds (`marks`), so a word shown in bold is a word the search matched. The other
splitters here count words for a purpose of their own, said at each.

The form of a text that search compares: compatibility characters folded (NFKC).

PDFs made by LaTeX store ligatures ("ﬁlled", "di ﬀerent"), office files full-width forms and
superscripts. A person types "filled". Both channels compare folded text: BM25 indexes and
queries it, the encoder embeds it. Quoted fragments and their offsets stay exactly the
canonical text; only what is compared is folded.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

_WORD = re.compile(r"[^\W_]+")
_PIECES = re.compile(r"[^\W\d_]+|\d+")


def fold(text: str) -> str:
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text)


def words(text: str) -> list[str]:
    """The folded, lower-cased words of a text, as BM25 splits them."""
    return [w.lower() for w in _WORD.findall(fold(text))]


def index_words(text: str) -> list[str]:
    """The words as SQLite's unicode61 tokenizer (remove_diacritics 2) reads them, for an
    index that is not FTS5 (Milvus): lower case, compatibility forms folded, diacritics
    removed ("Café" -> "cafe", "ﬁle" -> "file")."""
    text = text.lower()
    if not text.isascii():
        decomposed = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _WORD.findall(text)


def pieces(word: str) -> list[str]:
    """The letter and digit runs of a word: "fy2018" -> ["fy", "2018"], "covid19" ->
    ["covid", "19"]; a word of one kind is one piece."""
    return _PIECES.findall(word)


# Terms that score ~0 under BM25 anyway; leaving them out keeps long posting lists unread.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "you",
        "your",
        "do",
        "does",
        "did",
        "how",
    ]
)

# Words that say how a question is asked, not what it is about: never "a word the library
# never uses", never evidence that a passage matches. BM25's stopwords and the rest of
# English's function words and question-shaping words ("how much", "what kind of"), the
# pronouns BM25 keeps ("themselves") and the pieces a clitic leaves ("People's": "s").
FUNCTION_WORDS = STOPWORDS | frozenset(
    [
        "him",
        "us",
        "himself",
        "herself",
        "itself",
        "myself",
        "yourself",
        "ourselves",
        "yourselves",
        "themselves",
        "s",
        "t",
        "d",
        "ll",
        "re",
        "ve",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "among",
        "any",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "can",
        "could",
        "doing",
        "during",
        "each",
        "either",
        "else",
        "ever",
        "every",
        "few",
        "further",
        "had",
        "having",
        "here",
        "kind",
        "many",
        "may",
        "might",
        "more",
        "most",
        "much",
        "must",
        "neither",
        "no",
        "nor",
        "not",
        "off",
        "often",
        "once",
        "one",
        "only",
        "other",
        "over",
        "own",
        "per",
        "same",
        "shall",
        "should",
        "some",
        "sort",
        "such",
        "than",
        "those",
        "through",
        "too",
        "type",
        "under",
        "until",
        "up",
        "upon",
        "very",
        "via",
        "while",
        "whose",
        "within",
        "without",
        "would",
        "yet",
    ]
)


def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def marks(text: str, matched) -> list[tuple[int, int]]:
    """Where in `text` the words the search matched stand, as (start, end) offsets: a word
    whose folded, lower-cased stem is a matched word's (the gate's own rule), so "services"
    is marked for "service" and "boiler" is not for "boil"."""
    stems = {stem(m) for m in matched}
    if not stems:
        return []
    return [(m.start(), m.end()) for m in _WORD.finditer(text)
            if stem(fold(m.group()).lower()) in stems]  # fmt: skip


# Words for counting whether a passage is thin (kbapp.chunk): letters only, two or more,
# and each CJK character a word of its own (CJK writes no spaces).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_LETTER_WORD = re.compile(f"[{_CJK}]|[^\\W\\d_{_CJK}]{{2,}}")


def letter_words(text: str) -> Iterator[re.Match]:
    return _LETTER_WORD.finditer(text)


def tokens(text: str) -> list[str]:
    return words(text)


# A word whose parts are joined by punctuation inside it: "3.9", "read.table", "COVID-19",
# "2018-12-01", "e-mail". The index splits it into its parts; the query also asks for the
# parts side by side (an FTS5 phrase): the writer meant one thing, not any "3" and any "9".
# The parts stay terms of their own, so "email" text still meets "e-mail" half-way.
# Measured (docs/EVALUATION.md): python-whatsnew MRR 0.742 -> 0.784, RR +11/-2 (p = 0.02);
# phrases alone +7/-2; squad-public and debian-manuals unchanged.
_COMPOUND = re.compile(r"[^\W_]+(?:[.\-/:][^\W_]+)+")
_LONE_LETTER = re.compile(f"[^\\W\\d_{_CJK}]")


def lone_letter(word: str) -> bool:
    """One letter of an alphabet: an initial or a piece of an abbreviation ("e.g."), not a
    name or a term (one CJK character is a word)."""
    return bool(_LONE_LETTER.fullmatch(word))


def terms(query: str) -> list[str]:
    """The query's terms in order: words, and each compound's parts then its phrase."""
    folded = fold(query)
    out: list[str] = []
    pos = 0
    for m in _COMPOUND.finditer(folded):
        parts = tokens(m.group())
        out += tokens(folded[pos : m.start()]) + parts
        # lone letters joined up are an abbreviation ("e.g.", "i.e."), not a phrase
        if not all(t in STOPWORDS or lone_letter(t) for t in parts):
            out.append(" ".join(parts))
        pos = m.end()
    return out + tokens(folded[pos:])
