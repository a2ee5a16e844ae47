"""The redactor's fast paths on large outputs (a 20,000-pod ``plan -o yaml`` is 27 MB) find exactly
what the plain scans find: base64 runs located by a substring search, prefilters over one
lower-cased copy of the text."""

from __future__ import annotations

import base64
import random

import pytest

from nodewright import redact

_PIECES = ("\n", "\\n", "  ", "==", "=", "\n  ", "\\n  ", " ", '"', ",", "-", "\r\n", ": ", "}")


def _text(seed: int, size: int) -> str:
    r = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        word = "".join(r.choice("ABCxyz019+/") for _ in range(r.choice((1, 3, 8, 15, 16, 17, 30, 60))))
        parts += [word, r.choice(_PIECES)]
        total += len(word) + 2
    return "".join(parts)


@pytest.mark.parametrize("seed", range(40))
def test_base64_runs_are_the_regex_matches(seed: int) -> None:
    text = _text(seed, 6000)
    fast = [m.span() for m in redact._base64_runs(text)]
    assert fast == [m.span() for m in redact._BASE64_RUN.finditer(text)]


def test_a_secret_deep_in_a_large_output_is_redacted() -> None:
    secret = "hunter2-very-secret"
    encoded = base64.b64encode(f"password: {secret}\n".encode()).decode()
    filler = "".join(f"  - default/bench-{i:06d}\n" for i in range(20_000))
    text = f"nodeClaims:\n{filler}  userData: {encoded}\n{filler}  caBundle: {'QUJD' * 8}\n"
    out = redact.redact(text)
    assert encoded not in out and "QUJD" * 8 not in out
    assert out.count(redact.REDACTED) == 2 and out.count("default/bench-019999") == 2


def test_any_case_gate_admits_what_the_exact_case_did() -> None:
    gate = redact._any_folded("certificate", "ClusterCA")
    big = "x" * (1 << 17)
    for text in (big + "ClusterCA", big + "certificate", big + "CERTIFICATE", "ClusterCA", "é ClusterCA"):
        assert gate(text)
    assert not gate(big) and not gate("é " + big)
