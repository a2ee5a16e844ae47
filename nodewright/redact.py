"""Finding secrets in text and replacing them with ``[secret]``: the one detector for every channel.

Secrets are recognised three ways, so a secret is hidden whatever path it took to the output:

* **by content**: AWS access key ids, AWS secret access keys (assigned to their usual names),
  private keys (PEM blocks), Kubernetes bootstrap tokens (``[a-z0-9]{6}.[a-z0-9]{16}``), GitHub
  tokens, password assignments, and any base64 PEM block (a cluster CA bundle, a key), including
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

import re
import threading
from collections.abc import Iterable
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

    def spans(self, text: str) -> Iterable[tuple[int, int]]:
        if self.prefilter is not None and self.prefilter.search(text) is None:
            return
        for m in self.pattern.finditer(text):
            if "s" in self.pattern.groupindex and m.group("s") is not None:
                yield m.span("s")
            else:
                yield m.span()


def _d(name: str, pattern: str, prefilter: str | None = None, *, credential: bool = True) -> Detector:
    return Detector(name, re.compile(pattern), re.compile(prefilter) if prefilter else None, credential)


DETECTORS: Final[tuple[Detector, ...]] = (
    _d("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", r"AKIA|ASIA"),
    _d(
        "AWS secret access key",
        r"(?i)(?:aws_secret_access_key|secretAccessKey|aws-secret-access-key)[\"']?\s*[=:]\s*[\"']?"
        r"(?P<s>[A-Za-z0-9/+=]{40})",
        r"(?i)secret.?access.?key",
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
    """Merged, sorted spans of every secret in ``text``."""
    spans: list[tuple[int, int]] = []
    for value in sorted({*marked_secrets(), *(e for e in extra if e and len(e) >= 4)}, key=len, reverse=True):
        start = text.find(value)
        while start >= 0:
            spans.append((start, start + len(value)))
            start = text.find(value, start + len(value))
    for d in DETECTORS:
        spans.extend(d.spans(text))
    return _merged(spans)


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
