"""Reserved capacity through ``plan`` over several rounds, ported from kubernetes-sigs/karpenter
v1.14.1 ``pkg/controllers/provisioning/scheduling/suite_test.go``, Describe "Reserved Instance
Types" (each test names its ``It``). Karpenter's provisioner runs the strict reserved-offering
mode (``provisioner.go``: ``DisableReservedCapacityFallback``), which is ``plan``'s default; a
round's NodeClaims become registered, not initialized Nodes before the next round
(:class:`Rounds`, upstream ``ExpectProvisioned``), and a launched reservation is used up for the
rounds after it as the fake provider marks it unavailable.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_sched_support import (
    CT,
    IT,
    ZONE,
    Rounds,
    affinity_to,
    anti_affinity,
    nodepool,
    pod,
    reserved_type,
    run,
)

from nodewright.scheduling.plan import PlanOptions

RID = "karpenter.k8s.aws/capacity-reservation-id"
NODEPOOL = "karpenter.sh/nodepool"
RESERVED_ERROR = (
    "one or more instance types with compatible reserved offerings are available, but could not be reserved"
)


def _types() -> list[Any]:
    """The suite's BeforeEach: large (no reservation), medium and small with one instance each."""
    return [
        reserved_type("large-instance-type", "6", "6Gi"),
        reserved_type("medium-instance-type", "3", "3Gi", [("r-medium-instance-type", 1)]),
        reserved_type("small-instance-type", "2", "2Gi", [("r-small-instance-type", 1)]),
    ]


def _labels(env: Rounds, p: Any) -> dict[str, str]:
    n = env.node_of(p.key)
    assert n is not None, f"{p.key} is not bound"
    return dict(n.metadata.labels)


def _reserved_then_fallback(env: Rounds, pods: list[Any], pool: str) -> None:
    """Round 1 places one pod on a reservation of ``pool`` (the other waits); round 2 places the
    other in ``pool`` on non-reserved capacity."""
    env.round(*pods)
    assert len(env.bound(pods)) == 1
    got = _labels(env, env.bound(pods)[0])
    assert RID in got and got[CT] == "reserved" and got[NODEPOOL] == pool
    rest = env.waiting(pods)
    env.round(*rest)
    got = _labels(env, env.bound(rest)[0])
    assert RID not in got and got[CT] != "reserved" and got[NODEPOOL] == pool


def _it(name: str) -> list[dict[str, Any]]:
    return [{"key": IT, "operator": "In", "values": [name]}]


def test_no_fallback_while_compatible_reservations_exist() -> None:
    """It "shouldn't fallback to on-demand or spot when compatible reserved offerings are available"."""
    env = Rounds([nodepool()], types=_types())
    pods = [pod(f"p{i}", cpu="1800m") for i in range(3)]
    doc = env.round(*pods)
    assert len(env.bound(pods)) == 1
    assert all(e.endswith(RESERVED_ERROR) for e in doc.pod_errors.values())
    got = _labels(env, env.bound(pods)[0])
    assert (got[RID], got[CT], got[IT]) == ("r-small-instance-type", "reserved", "small-instance-type")

    for want in (
        ("r-medium-instance-type", "reserved", "medium-instance-type"),
        (None, "on-demand", "small-instance-type"),
    ):
        pods = env.waiting(pods)
        env.round(*pods)
        assert len(env.bound(pods)) == 1
        got = _labels(env, env.bound(pods)[0])
        assert (got.get(RID), got[CT], got[IT]) == want


def _two_pools_pods(it: str, pools: bool = True) -> list[Any]:
    out = []
    for i in range(2):
        reqs = _it(it)
        if pools:
            reqs.append({"key": NODEPOOL, "operator": "In", "values": [f"np-{i + 1}"]})
        out.append(pod(f"p{i}", labels={"app": "test"}, affinity=anti_affinity(), required=[reqs]))
    return out


def test_reservations_shared_across_nodepools() -> None:
    """It "should correctly track reservations shared across nodepools"."""
    env = Rounds([nodepool("np-1"), nodepool("np-2")], types=_types())
    pods = _two_pools_pods("small-instance-type")
    env.round(*pods)
    assert len(env.bound(pods)) == 1
    got = _labels(env, env.bound(pods)[0])
    assert (got[RID], got[CT], got[IT]) == ("r-small-instance-type", "reserved", "small-instance-type")
    rest = env.waiting(pods)
    env.round(*rest)
    got = _labels(env, env.bound(rest)[0])
    assert RID not in got and got[CT] != "reserved" and got[IT] == "small-instance-type"


def test_distinct_reservations_per_nodepool_for_one_instance_pool() -> None:
    """It "should correctly track reservations for multiple nodepools with distinct reservations for
    the same instance pool"."""
    distinct = reserved_type("small-instance-type", "2", "2Gi", [("r-distinct", 1)])
    env = Rounds([nodepool("np-1"), nodepool("np-2")], types=_types(), types_for={"np-2": [distinct]})
    pods = _two_pools_pods("small-instance-type")
    env.round(*pods)
    assert len(env.bound(pods)) == 2
    got = [_labels(env, p) for p in pods]
    assert all(g[CT] == "reserved" and g[IT] == "small-instance-type" for g in got)
    assert got[0][RID] != got[1][RID]


def test_multiple_reservations_for_one_instance_pool() -> None:
    """It "should correctly track multiple reservations for the same instance pool"."""
    types = _types()
    types[2] = reserved_type(
        "small-instance-type", "2", "2Gi", [("r-small-instance-type", 1), ("r-small-instance-type-2", 2)]
    )
    env = Rounds([nodepool()], types=types)
    pods = [
        pod(f"p{i}", labels={"app": "test"}, affinity=anti_affinity(), required=[_it("small-instance-type")])
        for i in range(4)
    ]
    env.round(*pods)
    assert len(env.bound(pods)) == 2
    for p in env.bound(pods):
        got = _labels(env, p)
        assert RID in got and got[CT] == "reserved" and got[IT] == "small-instance-type"
    rest = env.waiting(pods)
    env.round(*rest)
    assert len(env.bound(rest)) == 1
    got = _labels(env, env.bound(rest)[0])
    assert RID in got and got[CT] == "reserved"
    rest = env.waiting(rest)
    env.round(*rest)
    got = _labels(env, env.bound(rest)[0])
    assert RID not in got and got[CT] != "reserved" and got[IT] == "small-instance-type"


def test_no_fallback_to_lower_weight_nodepool_while_reserved_available() -> None:
    """It "shouldn't fallback to a lower weight NodePool if a reserved offering is available"."""
    target = reserved_type("small-instance-type", "2", "2Gi", [("r-fallback", 1)])
    env = Rounds(
        [nodepool("np-primary", weight=100), nodepool("np-fallback", weight=50)],
        types=_types(),
        types_for={"np-fallback": [target]},
    )
    pods = [
        pod(f"p{i}", labels={"app": "test"}, affinity=anti_affinity(), required=[_it("small-instance-type")])
        for i in range(2)
    ]
    _reserved_then_fallback(env, pods, "np-primary")


def test_no_relaxation_on_reserved_offering_error() -> None:
    """It "shouldn't relax preferences when a pod fails to schedule due to a reserved offering error"."""
    distinct = reserved_type("small-instance-type", "2", "2Gi", [("r-distinct", 1)])
    env = Rounds([nodepool("np-1"), nodepool("np-2")], types=_types(), types_for={"np-2": [distinct]})
    prefer = [(1, [{"key": NODEPOOL, "operator": "In", "values": ["np-1"]}])]
    pods = [
        pod(
            f"p{i}",
            labels={"app": "test"},
            affinity=anti_affinity(),
            preferred=prefer,
            required=[_it("small-instance-type")],
        )
        for i in range(2)
    ]
    _reserved_then_fallback(env, pods, "np-1")


def test_multiple_pods_on_one_reserved_node() -> None:
    """It "should handle multiple pods on reserved nodes"."""
    env = Rounds([nodepool("np-1")], types=_types())
    reqs = [
        *_it("small-instance-type"),
        {"key": NODEPOOL, "operator": "In", "values": ["np-1"]},
        {"key": CT, "operator": "In", "values": ["reserved"]},
        {"key": ZONE, "operator": "In", "values": ["test-zone-1"]},
    ]
    pods = [
        pod(f"p{i}", labels={"app": "test"}, affinity=affinity_to(ZONE), required=[reqs]) for i in range(2)
    ]
    env.round(*pods)
    assert len(env.bound(pods)) == 2
    nodes = {env.pod(p.key).spec.node_name for p in pods}
    assert len(nodes) == 1
    got = _labels(env, pods[0])
    assert (got[RID], got[CT], got[IT]) == ("r-small-instance-type", "reserved", "small-instance-type")


# -- launch accounting (nodewright's) ---------------------------------------------------------------
def _one_reservation() -> list[Any]:
    return [reserved_type("small-instance-type", "2", "2Gi", [("r-one", 1)])]


def test_fallback_opt_in_does_not_overfill_a_reservation() -> None:
    """With ``--reserved-fallback``, three claims fit the small type; the reservation for one
    instance hosts one launch, the others launch on-demand/spot at their price."""
    pods = [pod(f"p{i}", labels={"app": "test"}, affinity=anti_affinity(), cpu="1") for i in range(3)]
    doc = run(
        [nodepool()],
        pods,
        types=_one_reservation(),
        options=PlanOptions(max_instance_types=60, reserved_fallback=True),
    )
    launches = [c.launch for c in doc.node_claims]
    assert len(launches) == 3
    assert [x.capacity_type for x in launches].count("reserved") == 1
    assert [c.labels.get(RID) for c in doc.node_claims].count("r-one") == 1
    assert abs(doc.summary.hourly_cost - sum(x.price for x in launches)) < 1e-3
    assert doc.summary.hourly_cost > 2 * 0.2


def test_strict_default_defers_pods_beyond_the_reservation() -> None:
    """The default (strict): one claim takes the reservation, the other pods wait for the next round
    with Karpenter's reserved-offering error, and nothing is launched at price 0 twice."""
    pods = [pod(f"p{i}", labels={"app": "test"}, affinity=anti_affinity(), cpu="1") for i in range(3)]
    doc = run([nodepool()], pods, types=_one_reservation())
    assert [c.launch.capacity_type for c in doc.node_claims] == ["reserved"]
    assert len(doc.pod_errors) == 2
    assert all(e == "Failed to schedule pod, " + RESERVED_ERROR for e in doc.pod_errors.values())


# -- kubernetes-sigs/karpenter v1.14.1 pkg/controllers/provisioning/scheduling/reservationmanager_test.go
def _manager() -> tuple[Any, Any, Any, Any]:
    """The suite's BeforeEach: small/medium/large types with reservations of 3, 2 and 1."""
    from nodewright.catalog.fake import new_instance_type
    from nodewright.catalog.model import Offering
    from nodewright.scheduling.reservations import ReservationManager

    three, two, one = (
        Offering(zone=z, capacity_type="reserved", price=0.0, reservation_id=rid, reservation_capacity=n)
        for z, rid, n in (("test-zone-1", "small-reserved", 3), ("test-zone-2", "medium-reserved", 2),
                          ("test-zone-3", "large-reserved", 1))
    )  # fmt: skip
    types = [
        new_instance_type(
            "small-reserved", resources={"cpu": "2", "memory": "4Gi", "pods": "10"}, offerings=(three,)
        ),
        new_instance_type(
            "medium-reserved", resources={"cpu": "4", "memory": "8Gi", "pods": "20"}, offerings=(two,)
        ),
        new_instance_type(
            "large-reserved", resources={"cpu": "8", "memory": "16Gi", "pods": "40"}, offerings=(one,)
        ),
    ]
    return ReservationManager(types), three, two, one


def test_reservation_manager_can_reserve() -> None:
    """Describe "CanReserve": "should return true when capacity is available", "... when hostname
    already has the reservation", "should return false when capacity is exhausted", "should return
    true for existing hostname even when capacity is exhausted", "should panic with non-existent
    reservation ID"."""
    from nodewright.catalog.model import Offering

    rm, _, _, one = _manager()
    assert rm.can_reserve("hostname-1", one)
    rm.reserve("hostname-1", [one])
    assert rm.can_reserve("hostname-1", one)
    assert not rm.can_reserve("hostname-new", one)
    missing = Offering(zone="z", capacity_type="reserved", price=0.0, reservation_id="i-dont-exist",
                       reservation_capacity=1)  # fmt: skip
    with pytest.raises(KeyError):
        rm.can_reserve("hostname-1", missing)
    with pytest.raises(KeyError):
        rm.reserve("hostname-1", [missing])


def test_reservation_manager_reserve() -> None:
    """Describe "Reserve": "should successfully reserve capacity", "should not double-reserve for the
    same hostname and reservation", "should decrement available capacity", "should handle multiple
    offerings in a single call", "should handle mixed new and existing reservations", "should panic
    when trying to over-reserve"."""
    rm, three, two, one = _manager()
    rm.reserve("hostname-1", [three])
    assert rm.has_reservation("hostname-1", three)
    rm.reserve("hostname-1", [two])
    rm.reserve("hostname-1", [two])
    assert rm.can_reserve("hostname-2", two)
    rm.reserve("hostname-2", [three])
    rm.reserve("hostname-3", [three])
    assert not rm.can_reserve("hostname-4", three)
    with pytest.raises(ValueError):
        rm.reserve("hostname-new", [three])
    rm, three, two, one = _manager()
    rm.reserve("hostname-1", [two])
    rm.reserve("hostname-1", [two, one])
    assert rm.has_reservation("hostname-1", two) and rm.has_reservation("hostname-1", one)
    assert rm.can_reserve("hostname-2", two)


def test_reservation_manager_release() -> None:
    """Describe "Release": single, non-existent (no-op), other hostname (no-op), several offerings,
    partial releases, "should restore capacity when releasing reservations", "should correctly
    track capacity after multiple reserve/release cycles"."""
    rm, three, two, _ = _manager()
    rm.reserve("hostname-1", [three])
    rm.release("hostname-1", three)
    assert not rm.has_reservation("hostname-1", three)
    rm.release("hostname-1", three)
    rm.reserve("hostname-1", [three])
    rm.release("hostname-2", three)
    assert rm.remaining(three) == 2
    rm, three, two, _ = _manager()
    rm.reserve("hostname-1", [three, two])
    rm.release("hostname-1", three)
    assert not rm.has_reservation("hostname-1", three) and rm.has_reservation("hostname-1", two)
    rm.release("hostname-1", three, two)
    assert not rm.has_reservation("hostname-1", two)
    rm, three, _, _ = _manager()
    for h in ("hostname-1", "hostname-2", "hostname-3"):
        rm.reserve(h, [three])
    assert rm.remaining(three) == 0
    rm.release("hostname-1", three)
    assert rm.remaining(three) == 1
    rm, three, _, _ = _manager()
    rm.reserve("hostname-1", [three])
    rm.release("hostname-1", three)
    rm.reserve("hostname-2", [three])
    assert rm.remaining(three) == 2


def test_reservation_manager_integration() -> None:
    """Describe "Integration Scenarios": "should handle complex reservation patterns", "should
    maintain consistency during mixed operations"."""
    rm, three, two, one = _manager()
    rm.reserve("host-1", [two, three])
    rm.reserve("host-2", [two, one])
    rm.reserve("host-3", [three])
    assert all(rm.has_reservation(h, o) for h, o in (("host-1", three), ("host-1", two), ("host-2", two),
                                                    ("host-2", one), ("host-3", three)))  # fmt: skip
    assert (rm.remaining(two), rm.remaining(three), rm.remaining(one)) == (0, 1, 0)
    rm, three, two, one = _manager()
    rm.reserve("host-1", [two, three])
    rm.reserve("host-2", [three, one])
    rm.release("host-1", two)
    rm.reserve("host-3", [two])
    rm.release("host-2", one)
    assert not rm.has_reservation("host-1", two) and rm.has_reservation("host-1", three)
    assert rm.has_reservation("host-2", three) and not rm.has_reservation("host-2", one)
    assert rm.has_reservation("host-3", two)
    assert (rm.remaining(two), rm.remaining(three), rm.remaining(one)) == (1, 1, 1)


@pytest.mark.parametrize("fallback", [False, True])
def test_cli_reserved_fallback_flag(tmp_path: Any, fallback: bool) -> None:
    """``nodewright plan``: strict by default; ``--reserved-fallback`` launches the other claims
    on-demand/spot, priced, and never a second time into the reservation for one instance."""
    import json

    import yaml
    from click.testing import CliRunner

    from nodewright.catalog import dump_catalog
    from nodewright.cli import main

    (tmp_path / "catalog.yaml").write_text(yaml.safe_dump(dump_catalog(_one_reservation())))
    (tmp_path / "nodepools.yaml").write_text(yaml.safe_dump(nodepool().to_k8s()))
    pods = [
        pod(f"p{i}", labels={"app": "test"}, affinity=anti_affinity(), cpu="1").to_k8s() for i in range(3)
    ]
    (tmp_path / "cluster.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
    args = ["plan", "-f", str(tmp_path / "nodepools.yaml"), "--cluster", str(tmp_path / "cluster.json"),
            "--catalog", str(tmp_path / "catalog.yaml"), "-o", "json"]  # fmt: skip
    result = CliRunner().invoke(main, [*args, "--reserved-fallback"] if fallback else args)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    kinds = sorted(c["launch"]["capacityType"] for c in doc["nodeClaims"])
    if fallback:
        assert kinds.count("reserved") == 1 and len(kinds) == 3 and doc["podErrors"] == {}
        assert doc["summary"]["hourlyCost"] > 0.4
    else:
        assert kinds == ["reserved"] and len(doc["podErrors"]) == 2


@pytest.mark.parametrize("how", ["flag", "env", "default"])
def test_reserved_capacity_gate_off_ignores_reserved_offerings(tmp_path: Any, how: str) -> None:
    """Karpenter's ``ReservedCapacity`` feature gate off: the provider creates no reserved offering
    (aws/karpenter-provider-aws v1.14.1 ``pkg/providers/instancetype/offering/
    reserved_capacity_resolver.go`` ResolveOfferings) and the scheduler reserves none
    (kubernetes-sigs/karpenter v1.14.1 ``scheduling/nodeclaim.go`` offeringsToReserve), so
    ``nodewright plan`` launches the pods on-demand/spot; the gate is on by default."""
    import json
    import os
    import subprocess
    import sys

    import yaml

    from nodewright.catalog import dump_catalog

    (tmp_path / "catalog.yaml").write_text(yaml.safe_dump(dump_catalog(_one_reservation())))
    (tmp_path / "nodepools.yaml").write_text(yaml.safe_dump(nodepool().to_k8s()))
    pods = [
        pod(f"p{i}", labels={"app": "test"}, affinity=anti_affinity(), cpu="1").to_k8s() for i in range(3)
    ]
    (tmp_path / "cluster.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
    args = [sys.executable, "-m", "nodewright.cli", "plan", "-f", str(tmp_path / "nodepools.yaml"),
            "--cluster", str(tmp_path / "cluster.json"), "--catalog", str(tmp_path / "catalog.yaml"),
            "-o", "json"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "FEATURE_GATES"}
    if how == "flag":
        args += ["--feature-gates", "ReservedCapacity=false"]
    elif how == "env":
        env["FEATURE_GATES"] = "ReservedCapacity=false"
    res = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    kinds = sorted(c["launch"]["capacityType"] for c in doc["nodeClaims"])
    gates = doc["karpenter"]["featureGates"]
    if how == "default":
        assert kinds == ["reserved"] and "ReservedCapacity=true" in gates
    else:
        assert "reserved" not in kinds and len(kinds) == 3 and doc["podErrors"] == {}
        assert "ReservedCapacity=false" in gates
