"""What a query asks beyond its words: "an exact phrase" every passage must hold, and
-words no passage may hold, as search engines have taught people to type them.

The words of a phrase stay part of the question (they are embedded and matched as any
other); an excluded word is not. Phrases and words are compared as BM25 reads text
(folded, lower-cased words), so "Heat-Pump" holds "heat pump".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import SearchError
from ..words import FUNCTION_WORDS, words

_PHRASE = re.compile(r"\"([^\"]*)\"|\u201c([^\u201d]*)\u201d")
# A word to leave out: a '-' that starts a word of two letters or more after another word
# and the word ends there ("heat pump -boiler"); "COVID-19", "e-mail", "-5 degrees", a query
# that starts with a dash ("-Wall", a compiler flag) and text pasted with a command line
# ("supplying the -B switch", "python3 -m module-name", "-rw-r--r--") are searched as written,
# and so is a dash typed as a hyphen before a function word ("the 4th league -the bottom
# league"): nobody leaves out every passage that says "the".
_EXCLUDE = re.compile(r"(?<=\s)-([^\W\d_][\w'.]*[^\W_])(?=[\s,;:.!?)]|$)")


@dataclass(frozen=True)
class Parsed:
    text: str  # what is searched for: the query without its exclusions and quote marks
    phrases: tuple[tuple[str, ...], ...] = ()  # each phrase as its words
    excluded: frozenset[str] = frozenset()

    @property
    def narrowed(self) -> bool:
        return bool(self.phrases or self.excluded)

    def admits(self, content: str) -> bool:
        """The passage holds every phrase and none of the excluded words."""
        if not self.narrowed:
            return True
        toks = words(content)
        if self.excluded & set(toks):
            return False
        return all(_holds(toks, p) for p in self.phrases)

    def describe(self) -> str:
        said = [f"holds \u201c{' '.join(p)}\u201d" for p in self.phrases]
        if self.excluded:
            said.append("without " + ", ".join(f"\u201c{w}\u201d" for w in sorted(self.excluded)))
        return " and ".join(said)


def _holds(toks: list[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(tuple(toks[i : i + n]) == phrase for i, t in enumerate(toks) if t == phrase[0])


def _leaves_out(m: re.Match) -> bool:
    """A -word match that leaves passages out: not a function word ("-the")."""
    return not set(words(m.group(1))) <= FUNCTION_WORDS


def parse_query(q: str) -> Parsed:
    """The query's phrases and exclusions; refused when only exclusions are left."""
    phrases = []
    for m in _PHRASE.finditer(q):
        toks = tuple(words(m.group(1) if m.group(1) is not None else m.group(2)))
        if toks and toks not in phrases:
            phrases.append(toks)
    excluded = frozenset(w for m in _EXCLUDE.finditer(q) if _leaves_out(m)
                         for w in words(m.group(1)))  # fmt: skip
    text = _EXCLUDE.sub(lambda m: " " if _leaves_out(m) else m.group(0), q) if excluded else q
    text = (
        " ".join(text.replace('"', " ").replace("\u201c", " ").replace("\u201d", " ").split()) or q
    )
    if excluded and not words(text):
        raise SearchError(
            "the query only says what to leave out; add a word to search for "
            "(-word leaves passages with that word out)"
        )
    return Parsed(text, tuple(phrases), excluded)
