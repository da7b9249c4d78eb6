"""What an indexing run needs of the library it writes: `kbapp.library.Library` is one."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from ..config import Settings
    from ..embed import Encoder
    from ..store import Backend as Store


class Cache(Protocol):
    """The vector cache an indexing run keeps up to date (kbapp.store.backend.VectorFollower)."""

    def changed(self, removed: list[int], gen: int | None, added: list[int] | None = None,
                vectors: np.ndarray | None = None) -> None: ...  # fmt: skip
    def save(self) -> None: ...


class Target(Protocol):
    """What an indexing run needs of the library it writes (kbapp.library.Library)."""

    root: Path
    settings: Settings
    cache: Cache

    @property
    def store(self) -> Store: ...
    @property
    def encoder(self) -> Encoder: ...
    @property
    def stamp(self) -> tuple[str, str, str]: ...
    def writer(self, wait: bool = False) -> AbstractContextManager[None]: ...
    def folder_paths(self) -> list[Path]: ...
    def folder_id(self, path: Path) -> int | None: ...
