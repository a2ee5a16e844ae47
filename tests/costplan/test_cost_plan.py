"""``plan --strategy cost``: every cost plan passes the independent checker
(tests/costplan/plancheck.py), schedules every pod the karpenter strategy schedules and costs no
more. Workloads: upstream's benchmark pods (bench/scheduling.py), generated ones (hypothesis) and
the upstream scheduling/topology scenarios replayed through the cost strategy."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plancheck import check_plan
from test_sched_support import catalog, daemonset, node, nodepool, pod

from nodewright.api.core import Pod
from nodewright.api.karpenter import NodePool
from nodewright.catalog import fake_instance_types
from nodewright.catalog.model import InstanceType
from nodewright.cluster.state import ClusterState
from nodewright.costplan.strategy import plan_cost
from nodewright.scheduling.plan import PlanOptions, plan
from nodewright.scheduling.plandoc import PlanDocument

BENCH = Path(__file__).resolve().parents[2] / "bench"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def _both(
    pools: Sequence[NodePool],
    state: ClusterState,
    types: Sequence[InstanceType],
    options: PlanOptions | None = None,
) -> tuple[PlanDocument, PlanDocument]:
    options = options or PlanOptions()
    k = plan(nodepools=pools, cluster=state, catalog_for=lambda _np: types, options=options)
    c = plan_cost(nodepools=pools, cluster=state, catalog_for=lambda _np: types, options=options)
    return k, c


def _placed(doc: PlanDocument) -> set[str]:
    return {p for c in doc.node_claims for p in c.pods} | {p for n in doc.existing_nodes for p in n.pods}


def _assert_valid(
    pools: Sequence[NodePool],
    state: ClusterState,
    types: Sequence[InstanceType],
    options: PlanOptions | None = None,
) -> tuple[PlanDocument, PlanDocument]:
    k, c = _both(pools, state, types, options)
    assert c.summary.karpenter_hourly_cost == k.summary.hourly_cost
    assert c.summary.hourly_cost <= k.summary.hourly_cost + 1e-9
    problems = check_plan(
        c, nodepools=pools, cluster=state, types={np.name: types for np in pools}, must_schedule=_placed(k)
    )
    assert problems == [], problems
    return k, c


def _bench() -> Any:
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module("scheduling")
    finally:
        sys.path.remove(str(BENCH))


# -- upstream's benchmark workload ---------------------------------------------------------------
@pytest.mark.parametrize("kind", ["generic", "diverse"])
def test_benchmark_workload_cost_plan_is_valid_and_cheaper(kind: str) -> None:
    bench = _bench()
    raw = bench.generic_pods(600) if kind == "generic" else bench.diverse_pods(500)
    state = ClusterState(pods=tuple(Pod.model_validate(p) for p in raw))
    pool = NodePool.model_validate(bench.NODEPOOL)
    k, c = _assert_valid([pool], state, fake_instance_types(400))
    assert c.summary.scheduled == k.summary.scheduled == len(raw)
    if kind == "generic":
        assert c.summary.hourly_cost < k.summary.hourly_cost


def _diverse(n: int) -> tuple[ClusterState, NodePool, list[InstanceType]]:
    bench = _bench()
    state = ClusterState(pods=tuple(Pod.model_validate(p) for p in bench.diverse_pods(n)))
    return state, NodePool.model_validate(bench.NODEPOOL), fake_instance_types(400)


def test_checker_accepts_karpenters_own_plans_and_rejects_a_broken_one() -> None:
    state, pool, types = _diverse(300)
    k = plan(nodepools=[pool], cluster=state, catalog_for=lambda _np: types)
    assert check_plan(k, nodepools=[pool], cluster=state, types={"default": types}) == []
    # two hostname-anti-affinity pods on one claim, and an overfull claim
    anti = [p for c in k.node_claims for p in c.pods if int(p.rsplit("-", 1)[1]) > 240]
    first, *rest = k.node_claims
    assert first.launch is not None
    broken = replace(
        k,
        node_claims=(
            replace(
                first,
                pods=(*first.pods, *anti[:2]),
                launch=replace(first.launch, instance_type="fake-it-0"),
            ),
            *(replace(c, pods=tuple(p for p in c.pods if p not in anti[:2])) for c in rest),
        ),
    )
    problems = check_plan(broken, nodepools=[pool], cluster=state, types={"default": types})
    assert any("allocatable" in p for p in problems)
    assert any("anti-affinity" in p for p in problems)


# -- generated workloads -------------------------------------------------------------------------
_TYPES = fake_instance_types(40)
_CPUS = ("100m", "250m", "500m", "1", "1500m", "3")
_MEMS = ("128Mi", "512Mi", "1Gi", "2Gi", "6Gi")


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[NodePool], ClusterState]:
    pools = [nodepool("default", requirements=[], weight=draw(st.sampled_from([None, 10])))]
    if draw(st.booleans()):
        pools.append(
            nodepool(
                "tainted",
                requirements=[],
                taints=[{"key": "team", "value": "x", "effect": "NoSchedule"}],
                limits={"cpu": str(draw(st.integers(20, 400)))},
                weight=50,
            )
        )
    pods: list[Pod] = []
    n_groups = draw(st.integers(1, 5))
    for g in range(n_groups):
        count = draw(st.integers(1, 40))
        kind = draw(
            st.sampled_from(["plain", "plain", "zone-spread", "host-spread", "anti", "ports", "zone", "tol"])
        )
        cpu, mem = draw(st.sampled_from(_CPUS)), draw(st.sampled_from(_MEMS))
        for i in range(count):
            kw: dict[str, Any] = {"cpu": cpu, "memory": mem, "labels": {"app": f"g{g}"}}
            if kind in ("zone-spread", "host-spread"):
                key = ZONE if kind == "zone-spread" else HOSTNAME
                sel = {"matchLabels": {"app": f"g{g}"}}
                kw["tsc"] = [
                    {
                        "maxSkew": 1,
                        "topologyKey": key,
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": sel,
                    }
                ]
            elif kind == "anti":
                term = {"labelSelector": {"matchLabels": {"app": f"g{g}"}}, "topologyKey": HOSTNAME}
                kw["affinity"] = {
                    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
                }
            elif kind == "ports":
                kw["ports"] = [{"containerPort": 80, "hostPort": 8080 + g % 2}]
            elif kind == "zone":
                kw["node_selector"] = {
                    ZONE: draw(st.sampled_from(["test-zone-a", "test-zone-b", "test-zone-c"]))
                }
            elif kind == "tol":
                kw["tolerations"] = [
                    {"key": "team", "operator": "Equal", "value": "x", "effect": "NoSchedule"}
                ]
            pods.append(pod(f"g{g}-{i}", **kw))
    ds = [daemonset("agent", cpu="200m", memory="256Mi")] if draw(st.booleans()) else []
    nodes = []
    if draw(st.booleans()):  # an existing node with room: existing capacity first
        labels = {ZONE: "test-zone-a", "karpenter.sh/nodepool": "default", "karpenter.sh/registered": "true"}
        labels["karpenter.sh/initialized"] = "true"
        labels["node.kubernetes.io/instance-type"] = "fake-it-7"
        nodes.append(node("existing-1", labels=labels, capacity={"cpu": "8", "memory": "16Gi", "pods": "80"}))
    return pools, ClusterState(pods=tuple(pods), daemonsets=tuple(ds), nodes=tuple(nodes))


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(workloads())
def test_generated_workloads_cost_plans_pass_the_checker(w: tuple[list[NodePool], ClusterState]) -> None:
    pools, state = w
    _assert_valid(pools, state, _TYPES)


def test_cost_plan_is_deterministic() -> None:
    state, pool, types = _diverse(200)
    a = plan_cost(nodepools=[pool], cluster=state, catalog_for=lambda _np: types)
    b = plan_cost(nodepools=[pool], cluster=state, catalog_for=lambda _np: types)
    assert a == b


# -- upstream scenarios, replayed through the cost strategy --------------------------------------
_SCENARIO_MODULES = (
    "test_sched_scenarios",
    "test_topo_plan_spread",
    "test_topo_plan_affinity",
    "test_topo_plan_combined",
)


def _scenario_tests() -> list[tuple[str, Callable[[], None]]]:
    out = []
    for name in _SCENARIO_MODULES:
        mod = importlib.import_module(name)
        for fname, fn in sorted(vars(mod).items()):
            if fname.startswith("test_") and inspect.isfunction(fn) and not inspect.signature(fn).parameters:
                out.append((f"{name}.{fname}", fn))
    return out


def test_upstream_scenarios_cost_plans_pass_the_checker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``run`` of the upstream scenario tests (Karpenter's scheduling and topology suites,
    ported in tests/scheduling) also computes the cost plan and checks it; the scenario still
    asserts on the karpenter plan. A cost plan that differs must pass the checker."""
    import test_sched_support as support

    failures: list[str] = []
    checked = [0]
    current = [""]

    def both(
        *,
        nodepools: Sequence[NodePool],
        cluster: ClusterState,
        catalog_for: Any,
        options: PlanOptions | None = None,
    ) -> PlanDocument:
        options = options or PlanOptions()
        k = plan(nodepools=nodepools, cluster=cluster, catalog_for=catalog_for, options=options)
        c = plan_cost(nodepools=nodepools, cluster=cluster, catalog_for=catalog_for, options=options)
        assert c.summary.hourly_cost <= k.summary.hourly_cost + 1e-9
        if c.node_claims != k.node_claims or c.existing_nodes != k.existing_nodes:
            checked[0] += 1
            types = {np.name: list(catalog_for(np)) for np in nodepools}
            problems = check_plan(
                c, nodepools=nodepools, cluster=cluster, types=types, must_schedule=_placed(k)
            )
            if problems:
                failures.append(f"{current[0]}: {problems[:3]}")
        return k

    monkeypatch.setattr(support, "plan", both)
    ran = 0
    for name, fn in _scenario_tests():
        current[0] = name
        try:
            fn()
            ran += 1
        except AssertionError:
            continue  # a scenario with other expectations of the plan: still checked above
    assert ran > 50
    assert checked[0] >= 1  # cost plans that differ from Karpenter's were checked
    assert failures == [], failures


def test_catalog_fixture_is_loaded() -> None:
    assert catalog()


# -- the CLI ---------------------------------------------------------------------------------------
def test_cli_cost_strategy_document_and_claims_file(tmp_path: Path) -> None:
    """`plan --strategy cost --write`: the same document plus strategy and karpenterHourlyCost; the
    claims file records the strategy (docs/cli.md)."""
    import json

    import yaml
    from click.testing import CliRunner

    from nodewright.cli import main

    root = Path(__file__).resolve().parents[2]
    args = ["plan", "-f", str(root / "stacks/nodepools.yaml"), "-f", str(root / "stacks/nodeclasses.yaml")]
    args += ["--cluster", str(root / "stacks/examples/cluster.json"), "-o", "json"]
    karp = CliRunner().invoke(main, args)
    out = tmp_path / "claims.yaml"
    cost = CliRunner().invoke(main, [*args, "--strategy", "cost", "--write", str(out)])
    assert karp.exit_code == 0 and cost.exit_code == 0, cost.output
    k, c = json.loads(karp.stdout), json.loads(cost.stdout)
    assert "strategy" not in k["summary"] and "karpenterHourlyCost" not in k["summary"]
    assert c["summary"]["strategy"] == "cost"
    assert c["summary"]["karpenterHourlyCost"] == k["summary"]["hourlyCost"]
    assert c["summary"]["hourlyCost"] <= k["summary"]["hourlyCost"]
    assert set(c) == set(k)
    assert yaml.safe_load(out.read_text())["metadata"]["strategy"] == "cost"
