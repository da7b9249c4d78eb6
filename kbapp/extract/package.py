"""Office Open XML and OpenDocument files are ZIP packages: check one before a format
library opens it, and say plainly what else it is (password-protected, an older binary
Office file, damaged, a "zip bomb")."""

from __future__ import annotations

import zipfile
from pathlib import Path

from ..errors import ExtractionError

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# A package whose parts unpack to more than this is refused before it is opened
# (a "zip bomb" of a few kilobytes can claim terabytes).
MAX_UNPACKED = 2 * 2**30
PASSWORD_PROTECTED = ("password-protected: kbapp cannot read encrypted files; save a copy "
                      "without a password to index it")  # fmt: skip
def check_package(path: Path, fmt: str) -> None:
    """An Office Open XML or OpenDocument file is a ZIP package: say plainly what else it
    is (password-protected, an older binary format, damaged) before a library trips on it."""
    with path.open("rb") as f:
        head = f.read(8)
    if head == OLE_MAGIC:
        import olefile

        try:
            with olefile.OleFileIO(str(path)) as ole:
                encrypted = ole.exists("EncryptedPackage") or ole.exists("EncryptionInfo")
        except OSError:
            encrypted = False
        if encrypted:
            raise ExtractionError(PASSWORD_PROTECTED)
        raise ExtractionError(
            f"not a valid {fmt}: it is an older binary Office file with a new extension; "
            f"save it again as {fmt}"
        )
    if not zipfile.is_zipfile(path):
        raise ExtractionError(f"not a valid {fmt}: it is not a ZIP package (damaged or truncated)")
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            if any(i.flag_bits & 0x1 for i in infos):
                raise ExtractionError("password-protected: its parts are encrypted")
            unpacked = sum(i.file_size for i in infos)
            if unpacked > MAX_UNPACKED:
                raise ExtractionError(
                    f"not a valid {fmt}: its parts would unpack to {unpacked / 2**30:.0f} GB"
                )
            bad = z.testzip() if path.stat().st_size < 64 * 2**20 else None
    except zipfile.BadZipFile as exc:
        raise ExtractionError(f"not a valid {fmt}: {exc} (damaged or truncated)") from exc
    if bad is not None:
        raise ExtractionError(f"not a valid {fmt}: its part {bad} is damaged (truncated file?)")


