"""Kubernetes' name and label syntax rules (k8s.io/apimachinery ``pkg/util/validation``).

Boundary: pure string predicates returning the list of what is wrong (empty when valid), as the
upstream functions do; used for object metadata and Karpenter's runtime checks.
"""

from __future__ import annotations

import re
from typing import Final

_QNAME_CHAR: Final = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
QUALIFIED_NAME_RE: Final = re.compile(rf"^{_QNAME_CHAR}$")
LABEL_VALUE_RE: Final = re.compile(rf"^({_QNAME_CHAR})?$")
DNS1123_LABEL: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_RE: Final = re.compile(rf"^{DNS1123_LABEL}(\.{DNS1123_LABEL})*$")
QUALIFIED_NAME_MAX: Final = 63
LABEL_VALUE_MAX: Final = 63
DNS1123_SUBDOMAIN_MAX: Final = 253

_QNAME_FMT: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: lower case RFC 1123 subdomain, at most 253 characters."""
    errs: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters")
    if not DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
            "'.', and must start and end with an alphanumeric character (e.g. 'example.com')"
        )
    return errs


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName``: ``[prefix/]name``, prefix a DNS subdomain, name at most 63 characters."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend(f"prefix part {e}" for e in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + _QNAME_FMT
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        errs.append(f"name part must be no more than {QUALIFIED_NAME_MAX} characters")
    if name and not QUALIFIED_NAME_RE.match(name):
        errs.append(f"name part {_QNAME_FMT} (e.g. 'MyName', 'my.name' or '123-abc')")
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``: empty, or at most 63 characters of the qualified-name alphabet."""
    errs: list[str] = []
    if len(value) > LABEL_VALUE_MAX:
        errs.append(f"must be no more than {LABEL_VALUE_MAX} characters")
    if not LABEL_VALUE_RE.match(value):
        errs.append(f"a valid label {_QNAME_FMT} (e.g. 'MyValue', 'my_value' or '12345')")
    return errs
