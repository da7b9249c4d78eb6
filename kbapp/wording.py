"""Counts in words a user reads: "1 passage", "2 passages"."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and the noun in the number it takes: count(1, "passage") is "1 passage"."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
