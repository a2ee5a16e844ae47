"""Unit tests of the cost strategy's optimiser (nodewright.costplan: lp, packing, colgen) and of
minValues under the cost strategy."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from plancheck import check_plan
from test_sched_support import nodepool, pod

from nodewright.catalog import fake_instance_types
from nodewright.cluster.state import ClusterState
from nodewright.costplan.colgen import colgen_pack
from nodewright.costplan.lp import cover_lp
from nodewright.costplan.packing import BinType, PoolLimits, Shape, lower_bound, pack
from nodewright.costplan.strategy import plan_cost
from nodewright.scheduling.plan import plan


def test_cover_lp_optimum_and_duals() -> None:
    res = cover_lp([1.0, 1.5, 3.0], [[2, 1], [1, 3], [4, 4]], [10, 10])
    assert abs(res.value - 7.0) < 1e-9
    assert abs(res.x[0] - 4) < 1e-9 and abs(res.x[1] - 2) < 1e-9
    assert abs(res.duals[0] - 0.3) < 1e-9 and abs(res.duals[1] - 0.4) < 1e-9
    assert cover_lp([1.0], [[2, 1]], [10, 10], limits={0: ([1.0], 3.0)}).value == float("inf")


def _shapes(spec: list[tuple[tuple[int, int], int]]) -> list[Shape[int]]:
    out, n = [], 0
    for vec, count in spec:
        out.append(Shape(vec=vec, items=list(range(n, n + count))))
        n += count
    return out


# a compute type (cpu-rich) and a memory type (memory-rich), same price per "unit"
TYPES = [
    BinType(index=0, cap=(16, 16), price=1.0, capacity=(16, 16)),
    BinType(index=1, cap=(4, 64), price=1.0, capacity=(4, 64)),
    BinType(index=2, cap=(32, 128), price=4.0, capacity=(32, 128)),
]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(st.tuples(st.integers(1, 8), st.integers(1, 40)), st.integers(1, 30)),
        min_size=1,
        max_size=5,
    )
)
def test_pack_holds_every_item_within_each_bins_room(spec: list[tuple[tuple[int, int], int]]) -> None:
    shapes = _shapes(spec)
    for bins in (pack(shapes, TYPES), colgen_pack(shapes, TYPES)):
        assert bins is not None
        items = sorted(i for b in bins for i in b.items)
        assert items == sorted(i for s in shapes for i in s.items)
        vec = {i: s.vec for s in shapes for i in s.items}
        for b in bins:
            load = [sum(vec[i][d] for i in b.items) for d in range(2)]
            assert all(x <= c for x, c in zip(load, b.type.cap, strict=True))
        assert sum(b.type.price for b in bins) >= lower_bound(shapes, TYPES) - 1e-9


def test_column_generation_mixes_types_the_greedy_does_not() -> None:
    # cpu-heavy and memory-heavy pods: compute nodes for the first, memory nodes for the second
    shapes = _shapes([((4, 2), 40), ((1, 16), 40)])
    greedy = pack(shapes, TYPES)
    cg = colgen_pack(shapes, TYPES)
    assert greedy is not None and cg is not None
    assert sum(b.type.price for b in cg) <= sum(b.type.price for b in greedy)
    assert {b.type.index for b in cg} >= {0, 1}


def test_limits_are_charged_and_refuse() -> None:
    shapes = _shapes([((4, 4), 10)])
    lim = PoolLimits(remaining={0: 48}, nodes=None)
    bins = pack(shapes, TYPES, limits=lim)
    assert bins is not None and sum(b.type.capacity[0] for b in bins) <= 48
    assert pack(shapes, TYPES, limits=PoolLimits(remaining={0: 32})) is None  # 40 cpu of pods


def test_min_values_pool_keeps_its_options_under_the_cost_strategy() -> None:
    types = fake_instance_types(40)
    pools = [
        nodepool(
            requirements=[{"key": "node.kubernetes.io/instance-type", "operator": "Exists", "minValues": 3}]
        )
    ]
    state = ClusterState(pods=tuple(pod(f"p{i}", cpu="500m", memory="1Gi") for i in range(120)))
    k = plan(nodepools=pools, cluster=state, catalog_for=lambda _np: types)
    c = plan_cost(nodepools=pools, cluster=state, catalog_for=lambda _np: types)
    assert c.summary.scheduled == k.summary.scheduled == 120
    assert c.summary.hourly_cost <= k.summary.hourly_cost
    assert all(len(cl.instance_types) >= 3 for cl in c.node_claims)
    assert check_plan(c, nodepools=pools, cluster=state, types={"default": types}) == []


def test_column_generation_is_deterministic() -> None:
    shapes = _shapes([((4, 2), 37), ((1, 16), 41), ((2, 5), 23)])
    runs = [colgen_pack(shapes, TYPES) for _ in range(3)]
    assert all(r is not None for r in runs)
    views = [[(b.type.index, tuple(b.items)) for b in r or []] for r in runs]
    assert views[0] == views[1] == views[2]
