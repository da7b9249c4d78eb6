"""E-mail: EML and MBOX with the standard library's email and mailbox, MSG with extract-msg.

A message renders as its subject (a heading), a header block (From, To, Cc, Date: in the
text, so they are searchable), the body (an HTML-only body rendered to text), then each
attachment kbapp can read as a section "Attachment: NAME" with its own text. An mbox is a
numbered series of messages: a citation names the message ("message 3").
"""

from __future__ import annotations

import email
import email.policy
import mailbox
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

from ..errors import ExtractionError, KbError
from .base import Builder, Extracted
from .html import render_html
from .text import title_from_name

MAX_ATTACHMENT_DEPTH = 2  # a message attached to a message attached to a message


@dataclass
class Message:
    subject: str
    headers: list[tuple[str, str]]
    body: str
    html: bool
    attachments: list[tuple[str, bytes]] = field(default_factory=list)


def _decode_part(part) -> str:
    try:
        content = part.get_content()
    except (LookupError, UnicodeError, ValueError, AssertionError):
        payload = part.get_payload(decode=True) or b""
        content = payload.decode("utf-8", "replace")
    if isinstance(content, bytes):
        content = content.decode("utf-8", "replace")
    return content if isinstance(content, str) else str(content)


def _from_email(msg: EmailMessage) -> Message:
    headers = [(k, " ".join(str(msg[k]).split())) for k in ("From", "To", "Cc", "Date") if msg[k]]
    body_part = msg.get_body(preferencelist=("plain", "html"))
    body, is_html = "", False
    if body_part is not None:
        body = _decode_part(body_part)
        is_html = body_part.get_content_subtype() == "html"
    attachments = []
    for part in msg.iter_attachments():
        name = part.get_filename()
        if part.get_content_type() == "message/rfc822":
            inner = part.get_payload()
            inner = inner[0] if isinstance(inner, list) and inner else inner
            if isinstance(inner, email.message.Message):
                attachments.append((name or "attached message.eml", inner.as_bytes()))
            continue
        if name:
            attachments.append((name, part.get_payload(decode=True) or b""))
    subject = " ".join(str(msg["Subject"] or "").split())
    return Message(subject, headers, body, is_html, attachments)


def _from_msg(path: Path) -> Message:
    import extract_msg

    try:
        m = extract_msg.openMsg(str(path))
    except Exception as exc:  # extract-msg raises its own errors and olefile's
        text = str(exc)
        if "encrypt" in text.lower():
            raise ExtractionError("password-protected: the message is encrypted") from exc
        raise ExtractionError(f"not a valid MSG: {text or type(exc).__name__}") from exc
    try:
        headers = [
            (k, " ".join(str(v).split()))
            for k, v in (("From", m.sender), ("To", m.to), ("Cc", m.cc), ("Date", m.date))
            if v
        ]  # fmt: skip
        body, is_html = m.body or "", False
        if not body.strip() and getattr(m, "htmlBody", None):
            raw = m.htmlBody
            body, is_html = (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw), True
        attachments = []
        for att in m.attachments:
            name = att.longFilename or att.shortFilename or "attachment"
            data = att.data
            if isinstance(data, bytes):
                attachments.append((name, data))
        return Message(" ".join((m.subject or "").split()), headers, body, is_html, attachments)
    finally:
        m.close()


def _render(b: Builder, msg: Message, level: int, read_attachment, warnings: list[str]) -> None:
    b.block(msg.subject or "(no subject)", level=level)
    b.block("\n".join(f"{k}: {v}" for k, v in msg.headers), sep="\n\n")
    if msg.html:
        text, heads, _ = render_html(msg.body)
        at = b.size + (2 if b.parts else 0)
        b.block(text)
        b.headings.extend(type(h)(h.at + at, h.end + at, h.level + level, h.title) for h in heads)
    else:
        for para in msg.body.replace("\r\n", "\n").split("\n\n"):
            b.block(para)
    for name, data in msg.attachments:
        ex = read_attachment(name, data, warnings)
        if ex is None or not ex.text.strip():
            continue
        b.block(f"Attachment: {name}", level=level + 1)
        at = b.size + 2
        b.block(ex.text)
        shift = at - (len(ex.text) - len(ex.text.lstrip()))
        b.headings.extend(
            type(h)(h.at + shift, h.end + shift, h.level + level + 1, h.title) for h in ex.headings
        )


def _attachment_reader(depth: int) -> Callable:
    def read(name: str, data: bytes, warnings: list[str]) -> Extracted | None:
        from . import extract, is_supported

        safe = Path(name.replace("/", "_").replace("\\", "_")).name or "attachment"
        if depth >= MAX_ATTACHMENT_DEPTH or not is_supported(Path(safe)) or not data:
            return None
        with tempfile.TemporaryDirectory(prefix="kbapp-att-") as tmp:
            p = Path(tmp) / safe
            p.write_bytes(data)
            try:
                return extract(p, time_limit=None, _depth=depth + 1)
            except KbError as exc:
                warnings.append(f"attachment {name!r} could not be read: {exc}")
                return None

    return read


def extract_eml(path: Path, depth: int = 0) -> Extracted:
    with path.open("rb") as f:
        msg = email.message_from_binary_file(f, policy=email.policy.default)
    if not msg.keys():
        raise ExtractionError("not a valid e-mail message: it has no headers")
    m = _from_email(msg)
    b, warnings = Builder(), []
    _render(b, m, 1, _attachment_reader(depth), warnings)
    return b.extracted(m.subject or title_from_name(path), "eml", warnings)


def extract_msg_file(path: Path, depth: int = 0) -> Extracted:
    m = _from_msg(path)
    b, warnings = Builder(), []
    _render(b, m, 1, _attachment_reader(depth), warnings)
    return b.extracted(m.subject or title_from_name(path), "msg", warnings)


def extract_mbox(path: Path, depth: int = 0) -> Extracted:
    with path.open("rb") as f:
        if not f.read(5) == b"From ":
            raise ExtractionError("not a valid mbox: it does not start with a 'From ' line")
    box = mailbox.mbox(
        str(path), factory=lambda f: email.message_from_binary_file(f, policy=email.policy.default),
        create=False,
    )  # fmt: skip
    b, warnings = Builder(), []
    read = _attachment_reader(depth)
    try:
        for number, msg in enumerate(box, start=1):
            b.start_unit(number)
            _render(b, _from_email(msg), 1, read, warnings)
    finally:
        box.close()
    return b.extracted(title_from_name(path), "mbox", warnings)
