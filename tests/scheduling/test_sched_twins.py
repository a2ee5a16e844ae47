"""Twin pods (the same requests, requirements and tolerations, no topology, ports or volume claims)
placed after one another on the NodeClaim the first went to, without rescanning: the plan must
be exactly the one the full scan of every pod gives (Karpenter ``scheduler.go`` scans each pod:
existing nodes, in-flight NodeClaims by pod count, then a new NodeClaim).

The same holds for an existing node: twins fill the node their twin went to while its room
takes them. The reference is the same solve with the shortcuts switched off (``Scheduler._twin``,
``Scheduler._place_run`` and ``Scheduler._fill_node`` answering "no answer"), over random pod sets
that mix twins with pods
that differ in requests, node selectors, tolerations, host ports and hostname spread, beside
existing nodes and under NodePool limits that run out.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sched_support import ARCH, HOSTNAME, catalog, node, nodepool, pod, run

from nodewright.catalog.fake import new_instance_type
from nodewright.scheduling.queue import Queue
from nodewright.scheduling.scheduler import Scheduler

_CPU = ("100m", "250m", "900m", "1", "3")


@contextmanager
def _scan_each_pod() -> Iterator[None]:
    """The reference: every shortcut for twins answers "no answer", so each pod is scanned."""
    with (
        mock.patch.object(Scheduler, "_twin", lambda self, pod: False),
        mock.patch.object(Scheduler, "_place_run", lambda self, queue: []),
        mock.patch.object(Scheduler, "_fill_node", lambda self, queue, i: []),
    ):
        yield


@st.composite
def _pods(draw: st.DrawFn) -> list[Any]:
    classes = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "cpu": st.sampled_from(_CPU),
                    "arch": st.sampled_from((None, "amd64", "arm64")),
                    "tolerate": st.booleans(),
                    "port": st.booleans(),
                    "spread": st.booleans(),
                }
            ),
            min_size=1,
            max_size=4,
        )
    )
    picks = draw(st.lists(st.integers(0, len(classes) - 1), min_size=1, max_size=40))
    out = []
    for i, k in enumerate(picks):
        c = classes[k]
        kw: dict[str, Any] = {"requests": {"cpu": c["cpu"]}, "labels": {"app": f"c{k}"}}
        if c["arch"]:
            kw["node_selector"] = {ARCH: c["arch"]}
        if c["tolerate"]:
            kw["tolerations"] = [{"key": "team", "operator": "Exists", "effect": "NoSchedule"}]
        if c["port"]:
            kw["ports"] = [{"containerPort": 8080, "hostPort": 8080}]
        if c["spread"]:
            kw["tsc"] = [
                {
                    "maxSkew": 1,
                    "topologyKey": HOSTNAME,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": f"c{k}"}},
                }
            ]
        out.append(pod(f"p{i:02d}", **kw))
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pods=_pods(),
    limit=st.sampled_from((None, "4", "9", "20")),
    existing=st.integers(0, 3),
    cpu=st.sampled_from(("2", "1500m", "4")),
)
def test_twins_take_the_claim_the_full_scan_gives(
    pods: list[Any], limit: str | None, existing: int, cpu: str
) -> None:
    pools = [nodepool(limits={"cpu": limit} if limit else None)]
    taint = [{"key": "team", "value": "a", "effect": "NoSchedule"}]
    nodes = [
        node(
            f"n{i}",
            labels={"karpenter.sh/nodepool": "default"},
            capacity={"cpu": cpu, "pods": "10"},
            taints=taint if i == 1 else (),
        )
        for i in range(existing)
    ]
    small = [it for it in catalog() if it.name != "default-instance-type"]
    fast = run(pools, pods, nodes=nodes, types=small)
    with _scan_each_pod():
        slow = run(pools, pods, nodes=nodes, types=small)
    assert fast == slow


def test_twins_fill_a_claim_then_open_the_next() -> None:
    """Many twins: the run stops where the claim's largest option is full, the rest open claims."""
    pods = [pod(f"p{i:03d}", requests={"cpu": "900m"}) for i in range(60)]
    fast = run([nodepool()], pods)
    with _scan_each_pod():
        slow = run([nodepool()], pods)
    assert fast == slow
    assert len({id(c) for c in fast.placements().values()}) > 1


def test_twins_follow_the_claim_order_not_the_first_twin() -> None:
    """Two NodeClaims with one pod each (one amd64, one arm64): the first small twin joins the first
    claim, the second goes to the other one, which has fewer pods now (fewest pods first)."""
    pods = [
        pod("a-amd", requests={"cpu": "1"}, node_selector={ARCH: "amd64"}),
        pod("a-arm", requests={"cpu": "1"}, node_selector={ARCH: "arm64"}),
        *(pod(f"s{i}", requests={"cpu": "100m"}) for i in range(4)),
    ]
    fast = run([nodepool()], pods)
    with _scan_each_pod():
        slow = run([nodepool()], pods)
    assert fast == slow
    where = fast.placements()
    assert where["default/s0"] is where["default/s2"] is not where["default/s1"] is where["default/s3"]


def test_a_twin_run_stops_where_no_type_holds_one_more() -> None:
    """The claim's largest cpu and largest memory come from different types: its room by each
    resource alone promises 8 more pods, but no type holds more than 2 (cpu-rich type: 1 GiB;
    memory-rich type: 1 cpu), so the run stops at 2 and the next twins open a new NodeClaim."""
    types = [
        new_instance_type("cpu-rich", resources={"cpu": "4", "memory": "1Gi", "pods": "100"}),
        new_instance_type("mem-rich", resources={"cpu": "1", "memory": "8Gi", "pods": "100"}),
    ]
    pods = [pod(f"p{i}", requests={"cpu": "400m", "memory": "400Mi"}) for i in range(6)]
    fast = run([nodepool()], pods, types=types)
    with mock.patch.object(Scheduler, "_place_run", lambda self, queue: []):
        slow = run([nodepool()], pods, types=types)
    assert fast == slow
    where = fast.placements()
    claims = [where[f"default/p{i}"] for i in range(6)]
    assert claims[0] is claims[1] is not claims[2] and len({id(c) for c in claims}) == 3


def test_twins_fill_existing_nodes_in_order() -> None:
    """Twins fill the first existing node with room, then the next, as the scan of each would."""
    nodes = [
        node(f"n{i}", labels={"karpenter.sh/nodepool": "default"}, capacity={"cpu": c, "pods": "5"})
        for i, c in enumerate(("1", "2", "950m"))
    ]
    pods = [pod(f"p{i:02d}", requests={"cpu": "300m"}) for i in range(14)]
    fast = run([nodepool()], pods, nodes=nodes)
    with mock.patch.object(Scheduler, "_fill_node", lambda self, queue, i: []):
        slow = run([nodepool()], pods, nodes=nodes)
    assert fast == slow
    on = [getattr(fast.placements()[f"default/p{i:02d}"], "name", None) for i in range(14)]
    # n0 room for 3 (cpu), n1 for 5 (its pods), n2 for 3; the rest open a NodeClaim
    assert on == ["n0"] * 3 + ["n1"] * 5 + ["n2"] * 3 + [on[11]] * 3 and on[11] not in ("n0", "n1", "n2")


class _P:
    def __init__(self, key: str) -> None:
        self.key = key
        self.sort_key = (0, 0, "", "", key)


def test_head_run_stops_where_pop_would() -> None:
    """``head_run`` returns what successive ``pop``s return (Karpenter's no-progress stop)."""
    q: Queue[_P] = Queue([_P("a"), _P("b"), _P("c")])
    a = q.pop()
    assert a is not None
    q.push(a)
    assert [p.key for p in q.head_run(lambda p: True, 10)] == ["b", "c", "a"]
    assert [p.key for p in q.head_run(lambda p: p.key != "c", 10)] == ["b"]
    assert [p.key for p in q.head_run(lambda p: True, 2)] == ["b", "c"]
    q.drop(1)
    assert [p.key for p in (q.pop(), q.pop())] == ["c", "a"]  # type: ignore[union-attr]
    # a full cycle without progress: both went round once and the queue has their length again
    q = Queue([_P("a"), _P("b")])
    for _ in range(2):
        got = q.pop()
        assert got is not None
        q.push(got)
    assert q.head_run(lambda p: True, 10) == [] and q.pop() is None


class _Q:
    def __init__(self, key: str, cpu: int) -> None:
        self.key = key
        self.sort_key = (-cpu, 0, "", "", key)


@settings(max_examples=300, deadline=None)
@given(
    cpus=st.lists(st.integers(0, 3), max_size=12),
    ops=st.lists(st.tuples(st.sampled_from(["pop", "push", "run", "drop"]), st.integers(0, 5)), max_size=60),
)
def test_the_queue_behaves_as_the_deque_it_replaces(cpus: list[int], ops: list[tuple[str, int]]) -> None:
    """The queue (a list read from a head index, compacted as it goes) pops, pushes, runs and drops
    as Karpenter's FIFO over the sorted pods with its no-progress stop, modelled here on a deque."""
    pods = [_Q(f"p{i}", c) for i, c in enumerate(cpus)]
    q: Queue[_Q] = Queue(pods)
    model = deque(sorted(pods, key=lambda p: p.sort_key))
    last: dict[str, int] = {}
    held: list[_Q] = []

    def model_run(same: Any, limit: int) -> list[_Q]:
        out: list[_Q] = []
        for p in model:
            if len(out) >= limit or last.get(p.key) == len(model) - len(out) or not same(p):
                break
            out.append(p)
        return out

    for op, n in ops:
        if op == "pop":
            want = None if not model or last.get(model[0].key) == len(model) else model.popleft()
            got = q.pop()
            assert got is want
            if got is not None:
                held.append(got)
        elif op == "push" and held:
            p = held.pop(n % len(held))
            q.push(p)
            model.append(p)
            last[p.key] = len(model)
        elif op == "run":
            cpu = -(n % 4)
            same = (lambda p, cpu=cpu: p.sort_key[0] == cpu) if n % 2 else (lambda p: True)
            assert q.head_run(same, n) == model_run(same, n)
        elif op == "drop":
            run = model_run(lambda p: True, n)
            q.drop(len(run))
            for _ in run:
                held.append(model.popleft())
        assert len(q) == len(model)


def test_twin_classes_are_shared_exactly_by_pods_the_scheduler_treats_alike() -> None:
    """A pod's twin class object is shared by the pods that ask alike (requests, requirements,
    tolerations; no host ports or volumes) and by no other, and follows a relaxation."""
    from nodewright.api.core import Pod
    from nodewright.scheduling.instancetypes import ResourceSpace
    from nodewright.scheduling.poddata import PodData
    from nodewright.scheduling.twins import twins

    space = ResourceSpace(["cpu", "memory", "pods"])

    def data(name: str, **kw: Any) -> PodData:
        return PodData(Pod.model_validate(pod(name, **kw)), space=space)

    a, b = data("a", cpu="1"), data("b", cpu="1")
    others = [
        data("c", cpu="2"),
        data("d", cpu="1", node_selector={ARCH: "arm64"}),
        data("e", cpu="1", tolerations=[{"key": "k", "operator": "Exists"}]),
        data("f", cpu="1", ports=[{"containerPort": 80, "hostPort": 8080}]),
    ]
    assert a.twin_class() is b.twin_class() and twins(a, b)
    for o in others:
        assert o.twin_class() is not a.twin_class() and not twins(a, o) and not twins(o, a)
    f = others[-1]
    assert (
        f.twin_class() is not data("g", cpu="1", ports=[{"containerPort": 80, "hostPort": 8080}]).twin_class()
    )
    assert a.fresh().twin is a.twin_class()
    relaxed = Pod.model_validate(pod("a", cpu="1", node_selector={ARCH: "arm64"}))
    a.refresh(relaxed)
    assert a.twin is None and a.twin_class() is others[1].twin_class()
