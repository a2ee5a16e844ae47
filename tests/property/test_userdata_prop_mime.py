"""Property: Go-compatible MIME parse/serialise round-trips parts (headers and bodies)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright.userdata.gomime import Part, canonical_header_key, read_multipart, write_multipart

TOKEN = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
header_keys = st.text(st.sampled_from(TOKEN), min_size=1, max_size=12).filter(
    lambda k: canonical_header_key(k) != "Content-Transfer-Encoding"
)
header_values = (
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=20)
    .map(lambda v: v.strip())
    .filter(bool)
)
bodies = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r"), max_size=80).filter(
    lambda b: "\n--//" not in b and not b.startswith("--//")
)
parts = st.builds(
    Part,
    headers=st.lists(st.tuples(header_keys.map(canonical_header_key), header_values), max_size=3).map(
        lambda hs: tuple(sorted(hs, key=lambda kv: kv[0]))
    ),
    body=bodies,
)


def _grouped(part: Part) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(part.headers, key=lambda kv: kv[0]))


@settings(max_examples=300, deadline=None)
@given(st.lists(parts, min_size=1, max_size=4))
def test_write_then_read_round_trips(items: list[Part]) -> None:
    text = write_multipart(items)
    back = read_multipart(text)
    assert [p.body for p in back] == [p.body for p in items]
    assert [_grouped(p) for p in back] == [_grouped(p) for p in items]
    assert write_multipart(back) == text
