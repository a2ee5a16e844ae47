"""Finding secrets in text and replacing them with ``[secret]``: the one detector for every channel.

Secrets are recognised three ways, so a secret is hidden whatever path it took to the output:

* **by content**: AWS access key ids, AWS secret access keys (assigned to their usual names),
  private keys (PEM blocks), Kubernetes bootstrap tokens (``[a-z0-9]{6}.[a-z0-9]{16}``), GitHub
  tokens, password assignments, PEM certificates in clear, and any base64 PEM block (a cluster CA bundle, a key), including
  the line-wrapped base64 GNU ``base64`` prints (76 columns), raw or with JSON/TOML ``\\n`` escapes;
* **by structure**: the values of fields that hold a CA bundle or a credential (``caBundle``,
  ``certificateAuthority``, Bottlerocket ``cluster-certificate``, ``--b64-cluster-ca``,
  ``-Base64ClusterCA``, ``secretAccessKey``, ``password`` ...), wrapped or not;
* **by declaration**: values the user marked secret (``secure:`` stack config, the cluster's CA
  bundle) registered with :func:`mark_secret` when they are read.

:func:`redact` is applied at the output boundary (the CLI's stdout/stderr, the preview report);
:func:`find_credentials` is what the ``user-data-safe`` policy reports, from the same detectors,
so whatever the policy detects is never printed. Placeholders such as ``<<BOOTSTRAP_TOKEN>>``
are not secrets and stay in clear. Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Final

REDACTED: Final = "[secret]"

# A base64 run that may continue over wrapped lines: a real newline plus indentation, or a
# JSON/TOML "\n" escape, followed by a line made only of base64 characters.
_B64: Final = r"[A-Za-z0-9+/]"
_WRAP: Final = r"(?:(?:\\r)?\\n|\r?\n)[ \t]*"
_LINE_END: Final = r"(?==*(?:$|[\s\"'\\,}\]]))"
B64_WRAPPED: Final = rf"{_B64}+={{0,2}}(?:{_WRAP}{_B64}+={{0,2}}{_LINE_END})*"

# base64 of "-----BEGIN " followed by RSA/(none)/EC/OPENSSH/DSA/ENCRYPTED " PRIVATE KEY"
_B64_KEY_HEADS: Final = r"(?:SU0EgUFJJVk|QUklWQVRFIE|FQyBQUklWQV|PUEVOU1NIIF|EU0EgUFJJVk|FTkNSWVBURU)"


@dataclass(frozen=True)
class Detector:
    """One kind of secret: a cheap prefilter, the full pattern (group ``s`` = the secret part)."""

    name: str
    pattern: re.Pattern[str]
    prefilter: re.Pattern[str] | None = None
    credential: bool = True  # reported by the user-data-safe policy (CA bundles are public)
    quick: Callable[[str], bool] | None = None  # the prefilter's answer, faster (large outputs)

    def spans(self, text: str) -> Iterable[tuple[int, int]]:
        if self.quick is not None:
            if not self.quick(text):
                return
        elif self.prefilter is not None and self.prefilter.search(text) is None:
            return
        for m in self.pattern.finditer(text):
            if "s" in self.pattern.groupindex and m.group("s") is not None:
                yield m.span("s")
            else:
                yield m.span()


def _d(
    name: str,
    pattern: str,
    prefilter: str | None = None,
    *,
    credential: bool = True,
    quick: Callable[[str], bool] | None = None,
) -> Detector:
    return Detector(
        name, re.compile(pattern), re.compile(prefilter) if prefilter else None, credential, quick
    )


def _any_of(*literals: str) -> Callable[[str], bool]:
    """The prefilter of an alternation of plain strings, as substring tests (no regex scan)."""
    return lambda text: any(lit in text for lit in literals)


_LOWER_CACHED: Final = 1 << 16
_last_lower: list[tuple[str, str]] = []


def _lower(text: str) -> str:
    """``text.lower()``, computed once per large text (the prefilters of one scan share it)."""
    if len(text) < _LOWER_CACHED:
        return text.lower()
    last = _last_lower[:1]
    if last and last[0][0] is text:
        return last[0][1]
    low = text.lower()
    _last_lower[:] = [(text, low)]
    return low


def _folded(lowered: str, fallback: str) -> Callable[[str], bool]:
    """A case-insensitive prefilter as a case-sensitive search of the lower-cased text (much faster
    than ``(?i)`` over megabytes); non-ASCII text, whose case folding is wider, keeps ``fallback``."""
    low, full = re.compile(lowered), re.compile(fallback)
    return lambda text: (low.search(_lower(text)) if text.isascii() else full.search(text)) is not None


def _any_folded(*literals: str) -> Callable[[str], bool]:
    """A prefilter admitting any case of the ``literals`` (a wider gate than their exact case: the
    full pattern decides) by substring tests of the lower-cased ASCII text; non-ASCII text tests the
    literals as given."""
    lowered = tuple(dict.fromkeys(lit.lower() for lit in literals))
    exact = _any_of(*literals)
    return lambda text: any(lit in _lower(text) for lit in lowered) if text.isascii() else exact(text)


DETECTORS: Final[tuple[Detector, ...]] = (
    _d("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", r"AKIA|ASIA"),
    _d(
        "AWS secret access key",
        r"(?i)(?:aws_secret_access_key|secretAccessKey|aws-secret-access-key)[\"']?\s*[=:]\s*[\"']?"
        r"(?P<s>[A-Za-z0-9/+=]{40})",
        r"(?i)secret.?access.?key",
        quick=_folded(r"secret.?access.?key", r"(?i)secret.?access.?key"),
    ),
    _d(
        "private key",
        r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY-----"
        r"(?:(?s:.*?)-----END (?:RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY-----"
        rf"|(?:{_WRAP}?{B64_WRAPPED})?)",
        r"PRIVATE KEY-----",
    ),
    _d(
        "Kubernetes bootstrap token",
        r"(?<![A-Za-z0-9])[a-z0-9]{6}\.[a-z0-9]{16}(?![A-Za-z0-9])",
        r"\.[a-z0-9]{16}(?![A-Za-z0-9])",
    ),
    _d(
        "private key",
        rf"LS0tLS1CRUdJTiB{_B64_KEY_HEADS}{B64_WRAPPED}",
        r"LS0tLS1CRUdJTiB",
    ),
    _d("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,}\b", r"gh[pousr]_"),
    _d(
        "password assignment",
        r"(?i)\b(?:password|passwd)[\"']?\s*[=:]\s*[\"']?(?P<s>[^\s'\"<>\[\]]{6,})",
        r"(?i)passw",
        quick=_folded(r"passw", r"(?i)passw"),
    ),
    # a PEM certificate in clear (a CA bundle a file or a Secret carries): its body
    _d(
        "PEM certificate",
        r"-----BEGIN (?:TRUSTED )?CERTIFICATE-----(?P<s>(?s:.*?))-----END (?:TRUSTED )?CERTIFICATE-----",
        r"CERTIFICATE-----",
        credential=False,
    ),
    # base64 of "-----BEGIN": a PEM block (CA bundle, certificate, key) in base64, wrapped or not
    _d(
        "base64 PEM block",
        rf"LS0tLS1CRUdJTi(?!B{_B64_KEY_HEADS}){B64_WRAPPED}",
        r"LS0tLS1CRUdJTi",
        credential=False,
    ),
    # fields whose value is a CA bundle (whatever its content) or a credential
    _d(
        "cluster CA bundle",
        r"(?:certificateAuthority[\"']?:\s*|cluster-certificate[\"']?\s*=\s*|--b64-cluster-ca[\s=]+"
        r"|-Base64ClusterCA\s+)[\"']?"
        rf"(?P<s>{B64_WRAPPED})",
        r"certificate|cluster-?ca|ClusterCA",
        credential=False,
        quick=_any_folded("certificate", "clusterca", "cluster-ca", "ClusterCA"),
    ),
    # config keys holding a CA bundle; the value must look like one (not the word in a message)
    _d(
        "cluster CA bundle",
        r"(?:caBundle|certificate-authority-data)[\"']?:\s*[\"']?"
        rf"(?P<s>(?={_B64}{{12}}){B64_WRAPPED})",
        r"caBundle|certificate-authority-data",
        credential=False,
    ),
)

CREDENTIAL_DETECTORS: Final = tuple(d for d in DETECTORS if d.credential)

_marked: set[str] = set()
_marked_lock = threading.Lock()


def mark_secret(*values: str | None) -> None:
    """Declare values secret for the rest of the process (stack ``secure:`` values, a CA bundle)."""
    with _marked_lock:
        _marked.update(v for v in values if v and len(v) >= 4 and v != REDACTED)


def marked_secrets() -> frozenset[str]:
    with _marked_lock:
        return frozenset(_marked)


def find_credentials(text: str, *, extra_patterns: Iterable[str] = ()) -> list[str]:
    """Names of the credential kinds found in ``text`` (never the values): the policy's view."""
    found = list(
        dict.fromkeys(d.name for d in CREDENTIAL_DETECTORS if next(iter(d.spans(text)), None) is not None)
    )
    found += [f"pattern {p!r}" for p in extra_patterns if re.search(p, text)]
    return found


def secret_spans(text: str, *, extra: Iterable[str] = ()) -> list[tuple[int, int]]:
    """Merged, sorted spans of every secret in ``text``, also where the text encodes it (see
    :func:`_encoded_spans`: JSON/TOML escapes, percent-encoding, base64)."""
    values = sorted({*marked_secrets(), *(e for e in extra if e and len(e) >= 4)}, key=len, reverse=True)
    return _spans(text, values, _VIEW_DEPTH)


def _spans(text: str, values: list[str], depth: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for value in values:
        start = text.find(value)
        while start >= 0:
            spans.append((start, start + len(value)))
            start = text.find(value, start + len(value))
    for d in DETECTORS:
        spans.extend(d.spans(text))
    if depth > 0:
        spans.extend(_encoded_spans(text, values, depth - 1))
    return _merged(spans)


_VIEW_DEPTH: Final = 3
"""How many encodings deep the redactor looks (e.g. a password, base64-encoded, inside a JSON string)."""


class _View:
    """A decoded copy of a text, with where each decoded character came from: a secret found in
    the decoded copy is redacted over the encoded characters it came from (a decoded piece maps,
    whole, onto its encoded run)."""

    def __init__(self, pieces: list[tuple[int, int, int, bool]], decoded: list[str]) -> None:
        self.text = "".join(decoded)
        self._pieces = pieces  # (decoded start, original start, original end, literal), in order
        self._starts = [p[0] for p in pieces]

    def _piece(self, pos: int) -> tuple[int, int, int, bool]:
        return self._pieces[max(0, bisect.bisect_right(self._starts, pos) - 1)]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the decoded span ``[start, end)`` (``end > start``)."""
        d, o, _, literal = self._piece(start)
        a = o + (start - d) if literal else o
        d, o, oend, literal = self._piece(end - 1)
        b = o + (end - d) if literal else oend
        return a, max(b, a + 1)


def _decode_view(
    text: str, matches: Iterable[re.Match[str]], decode: Callable[[re.Match[str]], str | None]
) -> _View | None:
    """``text`` with every one of ``matches`` (in order, disjoint) replaced by ``decode(match)``
    (None: kept)."""
    decoded: list[str] = []
    pieces: list[tuple[int, int, int, bool]] = []
    pos = dpos = 0
    for m in matches:
        value = decode(m)
        if not value:
            continue
        if m.start() > pos:
            pieces.append((dpos, pos, m.start(), True))
            decoded.append(text[pos : m.start()])
            dpos += m.start() - pos
        pieces.append((dpos, m.start(), m.end(), False))
        decoded.append(value)
        dpos += len(value)
        pos = m.end()
    if not pieces:
        return None
    pieces.append((dpos, pos, len(text), True))
    decoded.append(text[pos:])
    return _View(pieces, decoded)


_JSON_ESCAPES: Final = {
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "b": "\b",
    "f": "\f",
    "/": "/",
    '"': '"',
    "\\": "\\",
    "'": "'",
}
_ESCAPE: Final = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|[nrtbf/\"\\'])")
_PERCENT: Final = re.compile(r"%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})*")
_BASE64_RUN: Final = re.compile(
    r"[A-Za-z0-9+/]{16,}={0,2}"
    r"(?:(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/]{4,}={0,2}(?=\r?\n|\\[nr]|$|[\s\"',}\]]))*"
    r"(?![A-Za-z0-9+/])"
)


_B64_BYTES: Final = bytes(
    ord("a") if chr(i).isascii() and (chr(i).isalnum() or chr(i) in "+/") else ord(" ") for i in range(256)
)
_B64_MIN_RUN: Final = b"a" * 16


def _base64_runs(text: str) -> Iterator[re.Match[str]]:
    """``_BASE64_RUN.finditer(text)``, faster on large ASCII text: a match starts a run of 16 or
    more base64 characters, so the regex is only tried from the start of each such run, found by a
    substring search in a copy of the text where every base64 character is ``a``."""
    if not text.isascii() or len(text) < 4096:
        yield from _BASE64_RUN.finditer(text)
        return
    shape = text.encode("ascii").translate(_B64_BYTES)
    pos = 0
    while (hit := shape.find(_B64_MIN_RUN, pos)) >= 0:
        start = hit
        while start > pos and shape[start - 1] == 97:  # back to the run's first character
            start -= 1
        # no match starts between pos and the run (shorter runs only): search finds finditer's next
        m = _BASE64_RUN.search(text, start)
        if m is None:
            return
        yield m
        pos = m.end()


def _unescape(m: re.Match[str]) -> str | None:
    body = m.group()[1:]
    return chr(int(body[1:], 16)) if body[0] == "u" else _JSON_ESCAPES[body]


def _unpercent(m: re.Match[str]) -> str | None:
    # each byte as one character: secrets are ASCII, and a multi-byte character stays harmless
    return "".join(chr(int(m.group()[i + 1 : i + 3], 16)) for i in range(0, len(m.group()), 3))


def _unbase64(m: re.Match[str]) -> str | None:
    return _base64_text(m.group())


@functools.lru_cache(maxsize=4096)
def _base64_text(token: str) -> str | None:
    """The text a base64 run encodes, or None (not base64, or binary). Cached: large documents
    repeat the same long words (field names, hashes) many times."""
    run = re.sub(r"\\n|\s", "", token)
    if len(run) % 4:
        return None
    try:
        raw = base64.b64decode(run, validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(c.isprintable() or c in "\n\r\t" for c in decoded)
    return decoded if decoded and printable >= 0.95 * len(decoded) else None


def _encoded_spans(text: str, values: list[str], depth: int) -> list[tuple[int, int]]:
    """Secrets inside encoded parts of ``text``: JSON/TOML string escapes (``\\n``, ``\\"``),
    percent-encoding (Ignition ``data:,`` URLs) and base64 runs that decode to text (a file a
    shell heredoc or an Ignition ``data:;base64,`` URL carries); each found secret covers the
    encoded characters it came from."""
    out: list[tuple[int, int]] = []
    views = []
    if "\\" in text:
        views.append(_decode_view(text, _ESCAPE.finditer(text), _unescape))
    if "%" in text:
        views.append(_decode_view(text, _PERCENT.finditer(text), _unpercent))
    views.append(_decode_view(text, _base64_runs(text), _unbase64))
    for view in views:
        if view is None:
            continue
        out.extend(view.span(start, end) for start, end in _spans(view.text, values, depth))
    return out


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, disjoint spans covering the non-empty ``spans``."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def redact(text: str, *, extra: Iterable[str] = ()) -> str:
    """``text`` with every secret (see module docstring) replaced by ``[secret]``."""
    return replace_spans(text, secret_spans(text, extra=extra), REDACTED)


def without_public_ca(text: str, *, replacement: str = "<cluster-ca>") -> str:
    """``text`` with CA bundles (base64 PEM certificates, CA fields) replaced: they are public
    data, so a credential scan must not mistake a run of their base64 for a key."""
    spans = _merged(s for d in DETECTORS if not d.credential for s in d.spans(text))
    return replace_spans(text, spans, replacement)


def replace_spans(text: str, spans: list[tuple[int, int]], replacement: str) -> str:
    """``text`` with each of the sorted, disjoint ``spans`` replaced by ``replacement``."""
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for start, end in spans:
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def contains_secret(text: str, *, extra: Iterable[str] = ()) -> bool:
    return bool(secret_spans(text, extra=extra))
