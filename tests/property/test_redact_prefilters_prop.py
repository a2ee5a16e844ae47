"""The redactor's fast prefilters (substring tests, a case-insensitive search done on the
lower-cased text) never skip a text their regular expression admits: case-insensitive ones answer
exactly as it does, and the case-folded gates of case-sensitive ones may only be wider (the full
pattern then decides, so the redaction is the same)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright.redact import DETECTORS

WORDS = ["secret", "access", "key", "Secret_Access-Key", "SECRETACCESSKEY", "passw", "PASSWD", "PaSsWoRd",
         "certificate", "cluster-ca", "clusterca", "ClusterCA", "clusterCA", "Cluster-Ca", "ſecret", "paſſw",
         "K", "é", " ", "_", "-", "x"]  # fmt: skip
TEXT = st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=4)), max_size=12).map("".join)


@settings(max_examples=600, deadline=None)
@given(TEXT)
def test_quick_prefilters_agree_with_their_regexes(text: str) -> None:
    for d in DETECTORS:
        if d.quick is not None and d.prefilter is not None:
            admitted = d.prefilter.search(text) is not None
            if d.prefilter.flags & re.IGNORECASE:
                assert d.quick(text) == admitted, (d.name, text)
            elif admitted:
                assert d.quick(text), (d.name, text)
