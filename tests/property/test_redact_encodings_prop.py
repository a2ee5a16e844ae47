"""Property: a secret embedded in any text, then encoded as outputs carry it (JSON string,
percent-encoding, base64, and these nested), never survives :func:`nodewright.redact.redact`."""

from __future__ import annotations

import base64
import json
import string
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright import redact

SECRETS = [
    "AKIAQWERTYUIOPASDFGH",
    "aws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY1",
    "password=Sup3rS3cretPassw0rd",
    "q7x2mz.4f8k1p0c9d3b6a5e",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAzNotARealKeyButShapedLikeOne\n-----END RSA PRIVATE KEY-----",
]
CORES = ["AKIAQWERTYUIOPASDFGH", "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY1", "Sup3rS3cretPassw0rd",
         "q7x2mz.4f8k1p0c9d3b6a5e", "MIIEowIBAAKCAQEAzNotARealKeyButShapedLikeOne"]  # fmt: skip

TEXT = st.text(alphabet=string.ascii_letters + string.digits + " \n:=,.-_/", max_size=40)


def _encode(kind: str, text: str) -> str:
    if kind == "json":
        return json.dumps(text)
    if kind == "percent":
        return "data:," + quote(text, safe="")
    if kind == "base64":
        return "data:;base64," + base64.b64encode(text.encode()).decode()
    return text


@settings(max_examples=300, deadline=None)
@given(
    before=TEXT,
    after=TEXT,
    secret=st.sampled_from(SECRETS),
    chain=st.lists(st.sampled_from(["clear", "json", "percent", "base64"]), min_size=1, max_size=2),
    outer=TEXT,
)
def test_no_encoded_secret_survives(
    before: str, after: str, secret: str, chain: list[str], outer: str
) -> None:
    text = f"{before} {secret}\n{after}"
    for kind in chain:
        text = _encode(kind, text)
    out = redact.redact(f"{outer} {text} {outer}")
    for core in CORES:
        for form in _forms(core):
            assert form not in out


def _forms(core: str) -> list[str]:
    """The core secret clear, JSON-escaped, percent-encoded, and its base64 at each alignment."""
    forms = [core, json.dumps(core)[1:-1], quote(core, safe="")]
    for k in range(3):
        encoded = base64.b64encode(b"\0" * k + core.encode()).decode()
        forms.append(encoded[4 if k else 0 : len(encoded) - 4])
    return forms
