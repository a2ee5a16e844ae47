"""Kubernetes' name and label syntax rules (k8s.io/apimachinery ``pkg/util/validation``).

Boundary: pure string predicates returning the list of what is wrong (empty when valid) with
upstream's texts; used for object metadata, Karpenter's runtime checks and pod validation in the
scheduler (the one owner of these rules).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

# Go anchors these as ``^...$`` where ``$`` is the very end: ``fullmatch`` (Python's ``$`` would
# also match before a trailing newline).
_NAME_RE: Final = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN_RE: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1123_LABEL_RE: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_LABEL_VALUE_RE: Final = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

_NAME_FMT: Final = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_QUALIFIED_FMT: Final = (
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
    "(e.g. 'example.com/MyName')"
)
_DNS1123_FMT: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_VALUE_FMT: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def go_list(values: Iterable[str]) -> str:
    """A Go ``%v`` of a string slice: ``[a b c]``."""
    return "[" + " ".join(values) + "]"


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: lower case RFC 1123 subdomain, at most 253 characters."""
    errs: list[str] = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_DNS1123_FMT)
    return errs


def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: lower case RFC 1123 label (a namespace name), at most 63 characters."""
    errs: list[str] = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1123_LABEL_RE.fullmatch(value):
        errs.append(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
            "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
            "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        )
    return errs


def is_qualified_name(key: str) -> list[str]:
    """``IsQualifiedName``: ``[prefix/]name``, prefix a DNS subdomain, name at most 63 characters."""
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        errs = [
            f"prefix part {e}" if e.startswith("a lowercase") else e for e in is_dns1123_subdomain(prefix)
        ]
        errs = [e.replace("must be no more", "prefix part must be no more") for e in errs]
        if errs:
            return errs
    else:
        return [_QUALIFIED_FMT]
    if not name:
        return ["name part must be non-empty"]
    out: list[str] = []
    if len(name) > 63:
        out.append("name part must be no more than 63 characters")
    if not _NAME_RE.fullmatch(name):
        out.append(_NAME_FMT)
    return out


def is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``: empty, or at most 63 characters of the qualified-name alphabet."""
    out: list[str] = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    if not _LABEL_VALUE_RE.fullmatch(value):
        out.append(_LABEL_VALUE_FMT)
    return out
