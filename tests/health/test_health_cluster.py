"""Health derived from cluster states: timeouts, resets, verified NodeClasses, pending pods, outputs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import builders
import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

from nodewright.cli import main
from nodewright.health import Tracker, flag_pools, nodepool_health

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
REF = builders.AWS_NODECLASS_REF


def _ts(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).isoformat().replace("+00:00", "Z")


def nodepool(
    name: str = "default",
    *,
    generation: int = 1,
    condition: dict[str, Any] | None = None,
    nc_observed: int | None = 1,
    weight: int | None = None,
    taints: list[dict[str, str]] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if condition is not None:
        status["conditions"] = [
            {"type": "NodeRegistrationHealthy", "observedGeneration": generation, **condition}
        ]
    if nc_observed is not None:
        status["nodeClassObservedGeneration"] = nc_observed
    return builders.nodepool(
        name,
        node_class_ref=REF,
        requirements=[{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
        taints=taints or [],
        labels=labels or None,
        weight=weight,
        uid=f"uid-{name}",
        generation=generation,
        status=status,
    )


def claim(
    name: str,
    pool: str = "default",
    *,
    launched: tuple[str, float] | None = ("True", 30),
    registered: tuple[str, float] | None = ("True", 29),
    initialized: tuple[str, float] | None = ("True", 28),
    launch_reason: str | None = None,
) -> dict[str, Any]:
    conds = []
    for typ, val in (("Launched", launched), ("Registered", registered), ("Initialized", initialized)):
        if val is not None:
            c = {"type": typ, "status": val[0], "lastTransitionTime": _ts(val[1])}
            if typ == "Launched" and launch_reason:
                c["reason"] = launch_reason
                c["message"] = "insufficient capacity"
            conds.append(c)
    return builders.nodeclaim(
        name,
        nodepool_name=pool,
        conditions=conds,
        node_class_ref=REF,
        owner_uid=f"uid-{pool}",
        created=_ts(60),
    )


def stuck(name: str, minutes: float, pool: str = "default") -> dict[str, Any]:
    """Launched, never registered."""
    return claim(
        name,
        pool,
        launched=("True", minutes + 1),
        registered=("Unknown", minutes),
        initialized=("Unknown", minutes),
    )


def nodeclass(generation: int = 1) -> dict[str, Any]:
    return builders.ec2nodeclass(role="R", uid="uid-nc", generation=generation)


def pending_pod(name: str, **spec: Any) -> dict[str, Any]:
    doc = builders.pod(name, cpu="1", image="i", created=_ts(10), pending_since=_ts(5))
    doc["spec"].update(spec)
    return doc


def write(tmp_path: Path, items: list[dict[str, Any]]) -> Path:
    return builders.write_cluster(tmp_path / "cluster.json", items)


def test_four_registration_timeouts_are_unhealthy(tmp_path: Path) -> None:
    items = [nodepool(), nodeclass()] + [stuck(f"c{i}", 20 + i) for i in range(4)]
    report = nodepool_health(write(tmp_path, items), now=NOW)
    p = report.pool("default")
    assert p is not None
    assert p.tracker_status == "Unhealthy"
    assert p.buffer == (False, False, False, False)
    assert p.condition.status == "False"
    assert p.condition.reason == "RegistrationFailed"
    assert p.condition.message == "Failed to register node"
    assert p.condition.observed_generation == 1
    assert not p.verified and p.degraded.status == "True"
    assert [f.name for f in flag_pools(write(tmp_path, items), now=NOW)] == ["default"]


def test_registration_still_within_timeout_does_not_count(tmp_path: Path) -> None:
    items = [nodepool(), stuck("c0", 10), stuck("c1", 14)]
    p = nodepool_health(write(tmp_path, items), now=NOW).pool("default")
    assert p is not None and p.tracker_status == "Unknown" and p.results == ()


def test_launch_timeout_carries_the_launch_reason(tmp_path: Path) -> None:
    items = [
        nodepool(),
        claim(
            "a",
            launched=("False", 10),
            registered=None,
            initialized=None,
            launch_reason="InsufficientCapacity",
        ),
        claim(
            "b",
            launched=("False", 9),
            registered=None,
            initialized=None,
            launch_reason="InsufficientCapacity",
        ),
    ]
    p = nodepool_health(write(tmp_path, items), now=NOW).pool("default")
    assert p is not None and p.condition.status == "False"
    assert p.condition.reason == "InsufficientCapacity"
    assert p.condition.message == "insufficient capacity"


def test_one_failure_after_success_is_still_healthy(tmp_path: Path) -> None:
    items = [nodepool(), claim("ok", registered=("True", 40), launched=("True", 41)), stuck("bad", 20)]
    p = nodepool_health(write(tmp_path, items), now=NOW).pool("default")
    assert p is not None
    assert p.buffer == (True, False)
    assert p.tracker_status == "Healthy" and p.condition.status == "True"
    assert p.verified


def test_editing_the_nodeclass_resets_to_unknown(tmp_path: Path) -> None:
    unhealthy = {
        "status": "False",
        "reason": "RegistrationFailed",
        "message": "Failed to register node",
        "lastTransitionTime": _ts(30),
    }
    items = [nodepool(condition=unhealthy, nc_observed=1), nodeclass(generation=2)] + [
        stuck(f"c{i}", 20 + i) for i in range(4)
    ]
    p = nodepool_health(write(tmp_path, items), now=NOW).pool("default")
    assert p is not None
    assert p.reset and p.tracker_status == "Unknown" and p.condition.status == "Unknown"
    # without the edit the same state is Unhealthy
    items[1] = nodeclass(generation=1)
    p2 = nodepool_health(write(tmp_path, items), now=NOW).pool("default")
    assert p2 is not None and p2.condition.status == "False"


def test_editing_the_nodepool_resets_to_unknown(tmp_path: Path) -> None:
    unhealthy = {"status": "False", "reason": "RegistrationFailed", "lastTransitionTime": _ts(30)}
    pool = nodepool(condition=unhealthy, generation=2)
    pool["status"]["conditions"][0]["observedGeneration"] = 1
    p = nodepool_health(write(tmp_path, [pool]), now=NOW).pool("default")
    assert p is not None and p.condition.status == "Unknown" and p.reset


def test_rebuilds_from_existing_condition(tmp_path: Path) -> None:
    unhealthy = {"status": "False", "reason": "RegistrationFailed", "lastTransitionTime": _ts(30)}
    later = claim("ok", launched=("True", 21), registered=("True", 20), initialized=("True", 19))
    p = nodepool_health(write(tmp_path, [nodepool(condition=unhealthy), later]), now=NOW).pool("default")
    assert p is not None
    assert p.buffer == (False, False, True)  # [false,false] rehydrated, then the later success
    assert p.tracker_status == "Unhealthy" and p.condition.status == "False"
    healthy = {"status": "True", "reason": "NodeRegistrationHealthy", "lastTransitionTime": _ts(1)}
    q = nodepool_health(write(tmp_path, [nodepool(condition=healthy)]), now=NOW).pool("default")
    assert q is not None and q.buffer == (True,) and q.tracker_status == "Healthy"


def test_only_owned_nodeclaims_count(tmp_path: Path) -> None:
    foreign = stuck("x", 30)
    foreign["metadata"]["ownerReferences"][0]["uid"] = "uid-previous-incarnation"
    p = nodepool_health(write(tmp_path, [nodepool(), foreign, stuck("y", 30)]), now=NOW).pool("default")
    assert p is not None and [r.node_claim for r in p.results] == ["y"]


def test_verified_nodeclasses_map(tmp_path: Path) -> None:
    items = [nodepool(), nodeclass(), claim("a"), claim("b", initialized=("Unknown", 1))]
    p = nodepool_health(write(tmp_path, items), now=NOW).pool("default")
    assert p is not None
    assert p.verified_nodeclasses == {"default/uid-nc": True}
    assert p.verified and p.degraded.status == "False"


def test_never_verified_pool_is_flagged_unknown(tmp_path: Path) -> None:
    p = nodepool_health(write(tmp_path, [nodepool()]), now=NOW).pool("default")
    assert p is not None and not p.verified and p.degraded.status == "Unknown"
    flags = flag_pools(write(tmp_path, [nodepool()]), now=NOW)
    assert flags[0].status == "Unknown" and not flags[0].verified and "never launched" in flags[0].message


def test_pending_pods_go_to_the_matching_pool(tmp_path: Path) -> None:
    gpu = nodepool(
        "gpu",
        weight=10,
        taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
        labels={"accel": "gpu"},
    )
    tolerates = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    items = [
        nodepool(),
        gpu,
        pending_pod("web"),
        pending_pod("train", tolerations=tolerates, nodeSelector={"accel": "gpu"}),
        pending_pod("nowhere", nodeSelector={"team": "unknown"}),
    ]
    report = nodepool_health(write(tmp_path, items), now=NOW)
    assert report.pool("default").pending_pods == ("default/web",)  # type: ignore[union-attr]
    assert report.pool("gpu").pending_pods == ("default/train",)  # type: ignore[union-attr]
    assert report.unmatched_pods == ("default/nowhere",)


def test_series_of_states_carries_the_buffer(tmp_path: Path) -> None:
    tracker = Tracker()
    first = [nodepool(), stuck("c0", 20)]
    nodepool_health(write(tmp_path, first), now=NOW, tracker=tracker)
    second = [nodepool(), stuck("c0", 20), stuck("c1", 16)]
    p = nodepool_health(write(tmp_path, second), now=NOW, tracker=tracker).pool("default")
    assert p is not None and p.buffer == (False, False) and p.condition.status == "False"


@pytest.fixture
def broken(tmp_path: Path) -> str:
    items = [nodepool(), nodepool("spare", condition={"status": "True", "reason": "NodeRegistrationHealthy"})]
    items += [nodeclass(), pending_pod("web")] + [stuck(f"c{i}", 20 + i) for i in range(4)]
    return str(write(tmp_path, items))


def test_cli_names_the_broken_pool_in_every_format(broken: str) -> None:
    runner = CliRunner()
    now = ["--now", NOW.isoformat().replace("+00:00", "Z")]
    for fmt in ("table", "json", "yaml", "markdown", "prometheus"):
        res = runner.invoke(main, ["health", "--cluster", broken, "-o", fmt, *now])
        assert res.exit_code == 0, res.output + res.stderr
        assert "default" in res.output and "RegistrationFailed" in res.output, fmt
    data = json.loads(runner.invoke(main, ["health", "--cluster", broken, "-o", "json", *now]).output)
    pool = next(p for p in data["nodePools"] if p["name"] == "default")
    assert pool["condition"]["status"] == "False" and pool["buffer"] == [False, False, False, False]


def test_prometheus_output_parses(broken: str) -> None:
    res = CliRunner().invoke(
        main,
        ["health", "--cluster", broken, "-o", "prometheus", "--now", NOW.isoformat().replace("+00:00", "Z")],
    )
    families = {f.name: f for f in text_string_to_metric_families(res.output)}
    unbound = families["nodewright_pods_provisioning_unbound_time_seconds"]
    (sample,) = unbound.samples
    assert sample.labels["nodepool_verified"] == "false" and sample.labels["name"] == "web"
    assert sample.value == 300.0
    cond = [
        s for s in families["nodewright_nodepool_status_condition"].samples if s.labels["name"] == "default"
    ]
    assert cond[0].labels["status"] == "False" and cond[0].labels["reason"] == "RegistrationFailed"
    degraded = {s.labels["nodepool"]: s.value for s in families["nodewright_nodepool_degraded"].samples}
    assert degraded["default"] == 1.0


def test_cli_bad_now(broken: str) -> None:
    res = CliRunner().invoke(main, ["health", "--cluster", broken, "--now", "soon"])
    assert res.exit_code == 1 and "error:" in res.stderr


def test_cli_at_is_the_one_clock_and_is_stated(broken: str) -> None:
    """`--at` (former name `--now`, still accepted) fixes the time; every format but prometheus states it."""
    at = NOW.isoformat().replace("+00:00", "Z")
    runner = CliRunner()
    by_at = runner.invoke(main, ["health", "--cluster", broken, "-o", "json", "--at", at])
    by_now = runner.invoke(main, ["health", "--cluster", broken, "-o", "json", "--now", at])
    assert by_at.exit_code == 0, by_at.stderr
    assert json.loads(by_at.stdout) == json.loads(by_now.stdout)
    assert json.loads(by_at.stdout)["at"] == at
    assert f"at: {at}" in runner.invoke(main, ["health", "--cluster", broken, "--at", at]).stdout.splitlines()
    md = runner.invoke(main, ["health", "--cluster", broken, "-o", "markdown", "--at", at]).stdout
    assert f"Evaluated at {at}." in md
    bad = runner.invoke(main, ["health", "--cluster", broken, "--at", "soon"])
    assert bad.exit_code == 1 and "error: <args>: --at 'soon'" in bad.stderr
