"""The indexes that replace scans on large inputs answer exactly what the scans answered.

* :class:`nodewright.scheduling.fitindex.FitIndex` yields, in order, exactly the existing nodes
  whose remaining resources ``fits`` the request (the necessary condition of ``can_add``), also
  after nodes shrink, and one patched from the previous base's is the tree a fresh build gives;
* :class:`nodewright.health.derive._ClaimIndex` gives each pool exactly the NodeClaims
  ``_owned_by`` selects, in their order.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright.algebra.resources import fits
from nodewright.health.derive import _ClaimIndex, _owned_by
from nodewright.scheduling.fitindex import FitIndex

RESOURCES = ("cpu", "memory", "pods", "nvidia.com/gpu")
resource_lists = st.dictionaries(st.sampled_from(RESOURCES), st.integers(-2, 6), max_size=4)


@settings(max_examples=200, deadline=None)
@given(
    nodes=st.lists(resource_lists, max_size=12),
    requests=st.lists(resource_lists, min_size=1, max_size=6),
    shrink=st.lists(st.tuples(st.integers(0, 11), resource_lists), max_size=6),
)
def test_fit_index_is_the_fits_scan(
    nodes: list[dict[str, int]], requests: list[dict[str, int]], shrink: list[tuple[int, dict[str, int]]]
) -> None:
    existing: list[Any] = [SimpleNamespace(remaining=dict(r)) for r in nodes]
    index = FitIndex(existing)
    for step, req in enumerate(requests):
        expected = [i for i, n in enumerate(existing) if fits(req, n.remaining)]
        assert list(index.candidates(req)) == expected
        if step < len(shrink) and existing:
            i, used = shrink[step]
            i %= len(existing)
            node = existing[i]
            node.remaining = {k: v - used.get(k, 0) for k, v in node.remaining.items()}
            index.update(i)


def _kept(remaining: dict[str, int]) -> Any:
    return SimpleNamespace(remaining=remaining, state=SimpleNamespace(memo={}))


@settings(max_examples=300, deadline=None)
@given(
    before=st.lists(resource_lists, max_size=20),
    edits=st.lists(
        st.tuples(st.sampled_from(["drop", "add", "swap"]), st.integers(0, 30), resource_lists), max_size=5
    ),
)
def test_fit_index_patched_from_the_last_base_is_a_fresh_build(
    before: list[dict[str, int]], edits: list[tuple[str, int, dict[str, int]]]
) -> None:
    """A base's index built from the previous base's (``previous=``, nodes dropped, added or
    replaced, leaves equal in value where positions shifted) is the tree a fresh build gives."""
    nodes: list[Any] = [_kept(dict(r)) for r in before]
    previous = FitIndex(nodes)
    now = list(nodes)
    for op, at, rem in edits:
        if op == "drop" and now:
            now.pop(at % len(now))
        elif op == "add":
            now.insert(at % (len(now) + 1), _kept(dict(rem)))
        elif now:
            now[at % len(now)] = _kept(dict(rem))
    patched = FitIndex(now, previous=previous)
    assert patched.tree == FitIndex(now).tree
    assert previous.tree == FitIndex(nodes).tree  # the previous index is left as it was
    for req in before[:3]:
        assert list(patched.candidates(req)) == [i for i, n in enumerate(now) if fits(req, n.remaining)]


POOLS = ("a", "b", "c")
owner_refs = st.lists(
    st.fixed_dictionaries(
        {
            "kind": st.sampled_from(["NodePool", "Other"]),
            "name": st.sampled_from(POOLS),
            "uid": st.sampled_from(["", "u-a", "u-b", "u-c"]),
        }
    ),
    max_size=2,
)
claims = st.lists(
    st.fixed_dictionaries(
        {
            "metadata": st.fixed_dictionaries(
                {
                    "ownerReferences": owner_refs,
                    "labels": st.dictionaries(
                        st.just("karpenter.sh/nodepool"), st.sampled_from(POOLS), max_size=1
                    ),
                }
            )
        }
    ),
    max_size=10,
)


@settings(max_examples=200, deadline=None)
@given(claims=claims, pool=st.sampled_from(POOLS), uid=st.sampled_from(["", "u-a", "u-b"]))
def test_claim_index_is_the_owned_by_scan(claims: list[dict[str, Any]], pool: str, uid: str) -> None:
    expected = [c for c in claims if _owned_by(c, uid, pool)]
    assert _ClaimIndex(claims).owned_by(uid, pool) == expected
