"""MIME multipart exactly as Go's ``net/textproto``, ``mime`` and ``mime/multipart`` read and write it.

Karpenter merges user data with Go's standard library, so a faithful port must accept what Go
accepts, reject what Go rejects with Go's error text (``malformed MIME header: missing colon:
"--BOUNDARY"``), and write byte for byte what ``multipart.Writer`` writes (CRs removed afterwards,
as Karpenter does). Pure functions over ``str``; no I/O. Errors are :class:`GoMIMEError` carrying
Go's message; callers wrap them with the family-specific prefix.
"""

from __future__ import annotations

import quopri
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

BUFIO_SIZE: Final = 4096  # bufio.Reader default size: a longer line fails ReadSlice


class GoMIMEError(ValueError):
    """A MIME parse failure; ``str()`` is Go's own error text."""


class MessageError(GoMIMEError):
    """``mail.ReadMessage`` failed on the top-level headers."""


class MediaTypeError(GoMIMEError):
    """The top-level ``Content-Type`` is missing or not a valid media type (Go's ``mime:`` text)."""


class NotMultipartError(GoMIMEError):
    """The top-level ``Content-Type`` is not ``multipart/*``."""


class BodyError(GoMIMEError):
    """Reading a part's body failed (``io.ReadAll`` on the part)."""


class _EOF(Exception):
    """io.EOF while reading headers: Go's NextPart ends the archive silently on it."""


@dataclass(frozen=True)
class Part:
    """One MIME part: headers in the order read (canonical keys, values) and the raw body."""

    headers: tuple[tuple[str, str], ...]
    body: str

    def get(self, key: str) -> str:
        """The first value of header ``key`` (canonicalised), or ``""`` like Go's Header.Get."""
        want = canonical_header_key(key)
        for k, v in self.headers:
            if k == want:
                return v
        return ""


@dataclass(frozen=True)
class Message:
    """A top-level message: its headers and its body (whatever follows the blank line)."""

    headers: dict[str, list[str]] = field(default_factory=dict)
    body: str = ""

    def get(self, key: str) -> str:
        values = self.headers.get(canonical_header_key(key), [])
        return values[0] if values else ""


# -- Go string quoting (%q) ------------------------------------------------------------------


def go_quote(s: str) -> str:
    """``strconv.Quote``: a double-quoted Go string literal."""
    out = ['"']
    escapes = {
        "\a": "\\a",
        "\b": "\\b",
        "\f": "\\f",
        "\n": "\\n",
        "\r": "\\r",
        "\t": "\\t",
        "\v": "\\v",
        "\\": "\\\\",
        '"': '\\"',
    }
    for ch in s:
        if ch in escapes:
            out.append(escapes[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


# -- net/textproto ---------------------------------------------------------------------------

_TOKEN_CHARS: Final = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)


def canonical_header_key(key: str) -> str:
    """``textproto.CanonicalMIMEHeaderKey``: ``content-type`` -> ``Content-Type``.

    Go upper-cases the first letter and every letter after ``-`` and lower-cases the rest, with no
    exception: ``MIME-Version`` becomes ``Mime-Version`` and ``Content-ID`` ``Content-Id`` (Go's
    ``commonHeader`` table only interns those canonical spellings). Keys with a space are kept.
    """
    canon, _ok = _canonical_key(key)
    return canon


def _canonical_key(key: str) -> tuple[str, bool]:
    if not key:
        return "", False
    no_canon = False
    for c in key:
        if c in _TOKEN_CHARS:
            continue
        if c == " ":
            no_canon = True
            continue
        return key, False
    if no_canon:
        return key, True
    out = []
    upper = True
    for c in key:
        if upper and "a" <= c <= "z":
            c = c.upper()
        elif not upper and "A" <= c <= "Z":
            c = c.lower()
        out.append(c)
        upper = c == "-"
    return "".join(out), True


def _valid_value_char(c: str) -> bool:
    o = ord(c)
    return o >= 0x80 or (0x20 <= o < 0x7F) or c == "\t"


class _Stream:
    """A cursor over the text, with Go's bufio line reading semantics."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def at_eof(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos : self.pos + n]

    def read_slice_nl(self) -> tuple[str, bool]:
        """``ReadSlice('\\n')``: the line with its newline, and whether EOF was hit instead."""
        end = self.text.find("\n", self.pos)
        if end == -1:
            line = self.text[self.pos :]
            self.pos = len(self.text)
            if len(line) >= BUFIO_SIZE:
                raise GoMIMEError("multipart: NextPart: bufio: buffer full")
            return line, True
        if end + 1 - self.pos > BUFIO_SIZE:
            raise GoMIMEError("multipart: NextPart: bufio: buffer full")
        line = self.text[self.pos : end + 1]
        self.pos = end + 1
        return line, False

    def read_line(self) -> str:
        """``textproto.readLineSlice``: a line without ``\\n``/``\\r\\n``; :class:`_EOF` at the end."""
        if self.at_eof():
            raise _EOF
        end = self.text.find("\n", self.pos)
        if end == -1:
            line = self.text[self.pos :]
            self.pos = len(self.text)
        else:
            line = self.text[self.pos : end]
            self.pos = end + 1
        if line.endswith("\r") and end != -1:
            line = line[:-1]
        return line


def _trim(s: str) -> str:
    return s.strip(" \t\r\n")


def read_mime_header(stream: _Stream) -> tuple[dict[str, list[str]], bool]:
    """``textproto.Reader.ReadMIMEHeader`` (strict, Go >= 1.20).

    Returns the headers (keys in reading order) and whether the input ended before the blank line
    (Go's ``io.EOF``, returned together with the headers read so far).
    """
    headers: dict[str, list[str]] = {}
    first = stream.peek(1)
    if first in (" ", "\t"):
        line = stream.read_line()
        raise GoMIMEError("malformed MIME header initial line: " + line[:80])
    while True:
        try:
            line = stream.read_line()
        except _EOF:
            return headers, True
        if line == "":
            return headers, False
        if ":" not in line:
            raise GoMIMEError("malformed MIME header: missing colon: " + go_quote(line))
        kv = _trim(line)
        while not stream.at_eof() and stream.peek(1) in (" ", "\t"):
            while not stream.at_eof() and stream.peek(1) in (" ", "\t"):
                stream.pos += 1
            try:
                cont = stream.read_line()
            except _EOF:
                break
            kv = kv + " " + _trim(cont)
        k, _, v = kv.partition(":")
        key, ok = _canonical_key(k)
        if not ok or any(not _valid_value_char(c) for c in v):
            raise GoMIMEError("malformed MIME header line: " + kv)
        headers.setdefault(key, []).append(v.lstrip(" \t"))


def read_message(text: str) -> Message:
    """``mail.ReadMessage`` with the strict header reader: headers, then the rest as body."""
    stream = _Stream(text)
    try:
        headers, eof = read_mime_header(stream)
    except GoMIMEError as exc:
        raise MessageError(str(exc)) from None
    if eof and not headers:
        raise MessageError("EOF")
    return Message(headers=headers, body=text[stream.pos :])


# -- mime.ParseMediaType ---------------------------------------------------------------------

_TSPECIALS: Final = frozenset('()<>@,;:\\"/[]?=')


def _is_media_token_char(c: str) -> bool:
    return 0x20 < ord(c) < 0x7F and c not in _TSPECIALS


def _consume_token(v: str) -> tuple[str, str]:
    i = 0
    while i < len(v) and _is_media_token_char(v[i]):
        i += 1
    return v[:i], v[i:]


def _consume_value(v: str) -> tuple[str, str]:
    if not v:
        return "", v
    if v[0] != '"':
        return _consume_token(v)
    out: list[str] = []
    i = 1
    while i < len(v):
        c = v[i]
        if c == '"':
            return "".join(out), v[i + 1 :]
        if c == "\\" and i + 1 < len(v) and v[i + 1] in _TSPECIALS:
            out.append(v[i + 1])
            i += 2
            continue
        if c in "\r\n":
            return "", v
        out.append(c)
        i += 1
    return "", v


def _consume_param(v: str) -> tuple[str, str, str]:
    rest = v.lstrip()
    if not rest.startswith(";"):
        return "", "", v
    rest = rest[1:].lstrip()
    param, rest = _consume_token(rest)
    param = param.lower()
    if not param:
        return "", "", v
    rest = rest.lstrip()
    if not rest.startswith("="):
        return "", "", v
    rest = rest[1:].lstrip()
    value, rest2 = _consume_value(rest)
    if value == "" and rest2 == rest:
        return "", "", v
    return param, value, rest2


def parse_media_type(value: str) -> tuple[str, dict[str, str]]:
    """``mime.ParseMediaType`` (without RFC 2231 continuations, which user data never needs)."""
    base = value.split(";", 1)[0]
    mediatype = base.lower().strip()
    typ, rest = _consume_token(mediatype)
    if not typ:
        raise GoMIMEError("mime: no media type")
    if rest:
        if not rest.startswith("/"):
            raise GoMIMEError("mime: expected slash after first token")
        subtype, rest = _consume_token(rest[1:])
        if not subtype:
            raise GoMIMEError("mime: expected token after slash")
        if rest:
            raise GoMIMEError("mime: unexpected content after media subtype")
    params: dict[str, str] = {}
    v = value[len(base) :]
    while v:
        v = v.lstrip()
        if not v:
            break
        key, val, rem = _consume_param(v)
        if not key:
            if rem.strip() == ";":
                break
            raise GoMIMEError("mime: invalid media parameter")
        if key in params:
            raise GoMIMEError("mime: duplicate parameter name")
        params[key] = val
        v = rem
    return mediatype, params


# -- mime/multipart reader -------------------------------------------------------------------


class MultipartReader:
    """``multipart.NewReader(body, boundary)`` over a whole string."""

    def __init__(self, body: str, boundary: str) -> None:
        self.s = _Stream(body)
        self.nl = "\r\n"
        self.dash_boundary = "--" + boundary
        self.dash_boundary_dash = "--" + boundary + "--"
        self.parts_read = 0
        self.pending_body = False

    @property
    def nl_dash_boundary(self) -> str:
        return self.nl + self.dash_boundary

    def _is_final(self, line: str) -> bool:
        if not line.startswith(self.dash_boundary_dash):
            return False
        rest = line[len(self.dash_boundary_dash) :].lstrip(" \t")
        return rest == "" or rest == self.nl

    def _is_delimiter(self, line: str) -> bool:
        if not line.startswith(self.dash_boundary):
            return False
        rest = line[len(self.dash_boundary) :].lstrip(" \t")
        if self.parts_read == 0 and rest == "\n":
            self.nl = "\n"
        return rest == self.nl

    def _read_body(self) -> str:
        """Everything up to the real ``nl--boundary`` separator (Go's partReader)."""
        text, start = self.s.text, self.s.pos
        rest = text[start:]
        # Empty part written without the leading newline.
        if rest.startswith(self.dash_boundary_dash):
            tail = rest[len(self.dash_boundary_dash) :].lstrip(" \t")
            if tail.startswith(self.nl) or tail == "":
                return ""
        if rest.startswith(self.dash_boundary):
            tail = rest[len(self.dash_boundary) :].lstrip(" \t")
            if tail.startswith(self.nl):
                return ""
        search = start
        sep = self.nl_dash_boundary
        while True:
            idx = text.find(sep, search)
            if idx == -1:
                raise BodyError("unexpected EOF")
            after = text[idx + len(sep) :]
            if after == "":
                break  # matchAfterPrefix: the boundary at EOF ends the part (readErr is set)
            if after == "-":
                raise BodyError("unexpected EOF")
            if after.startswith("--"):
                break
            stripped = after.lstrip(" \t")
            if "\n" not in stripped:
                raise BodyError("unexpected EOF")
            if stripped.startswith("\n") or stripped.startswith("\r\n"):
                break
            search = idx + len(sep)  # a fake separator: part of the data
        self.s.pos = idx
        return text[start:idx]

    def next_part(self) -> Part | None:
        """The next part, or None at the end (Go's io.EOF)."""
        expect_new = False
        while True:
            line, eof = self.s.read_slice_nl()
            if eof:
                # Go returns io.EOF for a final boundary without its newline and otherwise
                # fmt.Errorf("multipart: NextPart: %w", io.EOF); Karpenter's loops (AL2
                # copyCustomUserDataParts, AL2023 mime.NewArchive) stop on errors.Is(err, io.EOF),
                # so an archive whose last line is "--boundary" without a newline is accepted.
                return None
            if self._is_delimiter(line):
                self.parts_read += 1
                headers, eof = read_mime_header(self.s)
                if eof:
                    return None
                body = self._read_body()
                items = [(k, v) for k, vs in headers.items() for v in vs]
                cte = "Content-Transfer-Encoding"
                if headers.get(cte, [""])[0] == "quoted-printable":
                    items = [(k, v) for k, v in items if k != cte]
                    body = quopri.decodestring(body.encode()).decode("utf-8", "replace")
                return Part(headers=tuple(items), body=body)
            if self._is_final(line):
                return None
            if expect_new:
                raise GoMIMEError(f"multipart: expecting a new Part; got line {go_quote(line)}")
            if self.parts_read == 0:
                continue
            if line == self.nl:
                expect_new = True
                continue
            raise GoMIMEError(f"multipart: unexpected line in Next(): {go_quote(line)}")

    def parts(self) -> list[Part]:
        out: list[Part] = []
        while (part := self.next_part()) is not None:
            out.append(part)
        return out


def looks_like_mime(text: str) -> bool:
    """Karpenter's MIME detection: the trimmed text starts with ``MIME-Version:`` or ``Content-Type:``."""
    t = text.strip()
    return t.startswith("MIME-Version:") or t.startswith("Content-Type:")


# -- mime/multipart writer -------------------------------------------------------------------

BOUNDARY: Final = "//"
SHELL_SCRIPT: Final = 'text/x-shellscript; charset="us-ascii"'
MULTIPART_HEADER: Final = f'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="{BOUNDARY}"\n\n'


def write_multipart(parts: Sequence[Part], boundary: str = BOUNDARY) -> str:
    """What Karpenter emits: its two header lines, ``multipart.Writer`` parts and close, CRs removed.

    Headers are grouped per key, keys sorted (``CreatePart``), values in their original order.
    """
    out = [f'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="{boundary}"\n\n']
    for index, part in enumerate(parts):
        out.append(f"\r\n--{boundary}\r\n" if index else f"--{boundary}\r\n")
        grouped: dict[str, list[str]] = {}
        for k, v in part.headers:
            grouped.setdefault(k, []).append(v)
        for key in sorted(grouped):
            for value in grouped[key]:
                out.append(f"{key}: {value}\r\n")
        out.append("\r\n")
        out.append(part.body)
    out.append(f"\r\n--{boundary}--\r\n")
    return "".join(out).replace("\r", "")


def check_no_boundary(parts: Sequence[Part], boundary: str = BOUNDARY) -> None:
    """Raise when a body contains a line starting ``--boundary``: Go's writer does not escape it, so the
    archive Karpenter writes would split there on the node (cloud-init and nodeadm read a different part list)."""
    marker = "--" + boundary
    for index, part in enumerate(parts):
        body = part.body.replace("\r", "")
        if body.startswith(marker) or "\n" + marker in body:
            raise GoMIMEError(
                f"part {index + 1} has a line starting with {marker}, the boundary Karpenter writes with; "
                "the node would split the user data there: change that line"
            )


def read_multipart(text: str) -> list[Part]:
    """Karpenter's ``getMultiPartReader`` + ``NextPart`` loop: the parts of a MIME user data.

    Raises a :class:`GoMIMEError` subclass with Go's message; callers add Karpenter's prefixes.
    """
    message = read_message(text)
    content_type = message.get("Content-Type")
    try:
        media, params = parse_media_type(content_type)
    except GoMIMEError as exc:
        raise MediaTypeError(str(exc)) from None
    if not media.startswith("multipart/"):
        raise NotMultipartError(media)
    return MultipartReader(message.body, params.get("boundary", "")).parts()
