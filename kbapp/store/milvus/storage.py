"""Where a team library is kept (the Storage of kbapp.store.backend), and its writer's lease."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from ...errors import LibraryBusy
from .connection import LEASE_S, _client, parse_address
from .passages import MilvusFollower
from .store import MilvusStore

if TYPE_CHECKING:
    from ..backend import Backend


class Lease:
    """The single writer of a team library: a row (owner, expiry) in the store, renewed
    while held. Re-entrant for the thread holding it; LibraryBusy for anyone else."""

    def __init__(self, store: Callable[[], MilvusStore], address: str) -> None:
        self._store, self.address = store, address
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.lock = threading.RLock()
        self._depth = 0
        self._renewer: threading.Thread | None = None
        self._stop = threading.Event()

    def _read(self) -> dict | None:
        raw = self._store().get_meta("lease")
        return json.loads(raw) if raw else None

    def _take(self) -> bool:
        held = self._read()
        if held and held["owner"] != self.owner and held["until"] > time.time():
            return False
        self._store().set_meta("lease", json.dumps({"owner": self.owner, "until": time.time() + LEASE_S}))
        held = self._read()  # two takers at once: the last write wins, the other backs off
        return bool(held and held["owner"] == self.owner)

    def _renew(self) -> None:
        while not self._stop.wait(LEASE_S / 3):
            with contextlib.suppress(Exception):
                self._store().set_meta("lease", json.dumps({"owner": self.owner, "until": time.time() + LEASE_S}))

    @contextlib.contextmanager
    def hold(self, wait: bool = False) -> Iterator[None]:
        if not self.lock.acquire(blocking=wait):
            raise LibraryBusy(f"the library at {self.address} is being written by this kbapp "
                              "(indexing); try again when it has finished")  # fmt: skip
        try:
            if self._depth == 0:
                while not self._take():
                    if not wait:
                        who = (self._read() or {}).get("owner", "another kbapp")
                        raise LibraryBusy(f"the team library at {self.address} is being indexed by "
                                          f"{who}; try again when it has finished")  # fmt: skip
                    time.sleep(1.0)
                self._store().documents.finish_interrupted()  # what a stopped writer left
                self._stop.clear()
                self._renewer = threading.Thread(target=self._renew, daemon=True, name="kbapp-lease")
                self._renewer.start()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._stop.set()
                    with contextlib.suppress(Exception):
                        held = self._read()
                        if held and held["owner"] == self.owner:
                            self._store().client.delete(self._store().blobs_name, filter='key == "meta:lease"')
        finally:
            self.lock.release()


class MilvusStorage:
    kind = "milvus"

    def __init__(self, address: str) -> None:
        self.address = address
        parse_address(address)
        self._store: MilvusStore | None = None
        self._guard = threading.Lock()
        self._lease = Lease(self.connect, address)

    def describe(self) -> str:
        return self.address

    def exists(self) -> bool:
        """Asked before a search: a mistyped name must not leave empty collections."""
        _, prefix, _ = parse_address(self.address)
        if not _client(self.address).has_collection(f"{prefix}_documents"):
            return False
        store = self.connect()
        return store.get_meta("model") is not None or bool(store.folders.all())

    def connect(self) -> MilvusStore:
        with self._guard:
            if self._store is None:
                self._store = MilvusStore(self.address)
            return self._store

    def writer(self) -> Callable[[bool], AbstractContextManager[None]]:
        return self._lease.hold

    def vectors(self, model: str, backend: Callable[[], Backend], dims: Callable[[], int],
                writer: Callable[..., AbstractContextManager[None]]) -> MilvusFollower:  # fmt: skip
        return MilvusFollower(self.connect, model)

    def set_aside(self) -> None:
        """`rebuild`: a team library's collections are dropped and made again (Milvus keeps
        no copy aside; the folders are kept by the caller)."""
        self.connect().drop_all()
        with self._guard:
            self._store = None

