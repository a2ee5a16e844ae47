"""CRD ``pattern``s run with Go's RE2 semantics (nodewright.crd.regex, google-re2).

Properties, for every pattern of the shipped CRDs: RE2's verdict equals Python's ``re`` with the
pattern translated the way Go reads it (``$`` outside a class is ``\\Z``: the very end, never before
a trailing newline; ASCII classes), and no value ending in a newline passes a pattern that ends with
``$`` and has no negated class (the "5\\n" / "720h\\n" cases the API server refuses).
"""

from __future__ import annotations

import re
from importlib import resources

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright.crd import regex
from nodewright.crd.releases import CRD_FILES, RELEASES


def _patterns() -> list[str]:
    found: set[str] = set()
    for rel in RELEASES.values():
        for kind, name in CRD_FILES.items():
            if not rel.ships(kind):
                continue
            text = (resources.files("nodewright") / "data" / "crds" / rel.crd_folder / name).read_text()
            stack = [yaml.safe_load(text)]
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    if isinstance(node.get("pattern"), str):
                        found.add(node["pattern"])
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
    return sorted(found)


PATTERNS = _patterns()


def go_translation(pattern: str) -> re.Pattern[str]:
    """The pattern as Python ``re`` reads Go: ``$`` outside a character class becomes ``\\Z``."""
    out: list[str] = []
    in_class = escaped = False
    for ch in pattern:
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == "\\":
            out.append(ch)
            escaped = True
        elif ch == "[" and not in_class:
            in_class = True
            out.append(ch)
        elif ch == "]" and in_class:
            in_class = False
            out.append(ch)
        elif ch == "$" and not in_class:
            out.append(r"\Z")
        else:
            out.append(ch)
    return re.compile("".join(out), re.ASCII)


ALPHABET = st.sampled_from([*"0123456789%smhNeverabcxyzAZ-_./:\n \t", "٣", "é", "\u2028"])
TRICKY = st.one_of(
    st.text(ALPHABET, max_size=24),
    st.builds(lambda s, nl: s + nl, st.text(ALPHABET, max_size=12), st.sampled_from(["\n", "\r\n", "\n\n"])),
    st.sampled_from(["5\n", "10%\n", "720h\n", "x\n", "Never\n", "100%", "1h30m", "", "\n"]),
)


def test_the_crds_have_patterns() -> None:
    assert len(PATTERNS) >= 5


@settings(max_examples=300, deadline=None)
@given(value=TRICKY, index=st.integers(min_value=0))
def test_re2_agrees_with_the_go_translation(value: str, index: int) -> None:
    pattern = PATTERNS[index % len(PATTERNS)]
    assert regex.search(pattern, value) == bool(go_translation(pattern).search(value)), (pattern, value)


@settings(max_examples=300, deadline=None)
@given(value=TRICKY, index=st.integers(min_value=0))
def test_no_value_ending_in_a_newline_passes_an_end_anchored_pattern(value: str, index: int) -> None:
    pattern = PATTERNS[index % len(PATTERNS)]
    if pattern.endswith("$") and "[^" not in pattern:  # a negated class may match the newline itself
        assert not regex.search(pattern, value.rstrip("\n") + "\n")
