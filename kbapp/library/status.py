"""What the library reports about itself: every document's state (`status`) and whether
its files are sound (`check`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..paths import display_path
from ..store import DocumentRow
from ..wording import count


@dataclass(frozen=True)
class LibraryStatus:
    library: str
    model: str
    documents: list[DocumentRow]  # every document, its state and reason

    def count(self, state: str) -> int:
        return sum(1 for d in self.documents if d.state == state)

    @property
    def chunks(self) -> int:
        return sum(d.chunks or 0 for d in self.documents if d.state == "indexed")


@dataclass(frozen=True)
class CheckReport:
    database: list[str]  # SQLite's findings; [] when every page is sound
    mismatched: list[tuple[int, str]]  # (chunk id, document) whose quote is not its slice
    vectors: int

    @property
    def ok(self) -> bool:
        return not self.database and not self.mismatched

    def describe(self) -> str:
        if self.ok:
            return f"the library is sound: {count(self.vectors, 'passage')} searchable"
        lines = ["the library is damaged:"]
        lines += [f"  database: {p}" for p in self.database[:10]]
        docs = sorted({display_path(d) for _, d in self.mismatched})
        if self.mismatched:
            lines.append(f"  {len(self.mismatched)} passage(s) no longer match their document's "
                         f"text (they are never quoted): {', '.join(docs[:5])}")  # fmt: skip
        lines.append("run `kbapp rebuild` to read every document again from its file "
                     "(folders are kept)")  # fmt: skip
        return "\n".join(lines)
