"""Live reads against a misbehaving API server (loopback harness): what client-go and kubectl do.

Each user-visible failure runs ``nodewright cluster snapshot`` as a real subprocess and checks its
one ``error:`` line and exit code; recoveries (retries, the 410 relist) run the live loader in process.
Tiny timeouts come from the flags, so no test waits long; no assertion is on elapsed time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from apiserver_harness import EXAMPLE, KIND_PATH, ROOT, Fault, Recorded, kubeconfig_for, serve, status_body

from nodewright.cluster import load_cluster, snapshot_settings
from nodewright.cluster.live import load_live
from nodewright.cluster.transport import Limits
from nodewright.settings import resolve

PODS = KIND_PATH["Pod"]
NODECLAIMS = KIND_PATH["NodeClaim"]
FAST = ["--request-timeout", "0.5", "--timeout", "20", "--retries", "1"]


@pytest.fixture
def api_server() -> Iterator[str]:
    with serve() as url:
        yield url


def _cli(*args: str, kubeconfig: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    if kubeconfig is not None:
        env["KUBECONFIG"] = str(kubeconfig)
    return subprocess.run(
        [sys.executable, "-m", "nodewright.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _snapshot(url: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    kubeconfig = kubeconfig_for(url, tmp_path)
    return _cli("cluster", "snapshot", "--kubeconfig", str(kubeconfig), "-q", *FAST, *extra)


def _one_error(res: subprocess.CompletedProcess[str]) -> str:
    assert res.returncode == 1, (res.returncode, res.stderr)
    assert "Traceback" not in res.stderr and res.stdout == ""
    lines = [x for x in res.stderr.splitlines() if x.startswith("error:")]
    assert len(lines) == 1, res.stderr
    return lines[0]


def _limits() -> Limits:
    return Limits(request_timeout=2, timeout=30, retries=3)


def test_silent_server_times_out_naming_server_and_kind(api_server: str, tmp_path: Path) -> None:
    Recorded.faults = [Fault(PODS, action="silence")]
    line = _one_error(_snapshot(api_server, tmp_path))
    assert line.startswith(f"error: {api_server} Pod: no response within 0.5s (--request-timeout)"), line


def test_server_stalling_mid_body_times_out(api_server: str, tmp_path: Path) -> None:
    Recorded.faults = [Fault(PODS, action="stall")]
    line = _one_error(_snapshot(api_server, tmp_path))
    assert line.startswith(f"error: {api_server} Pod: no response within 0.5s (--request-timeout)"), line


def test_deadline_bounds_a_server_asking_to_wait(api_server: str, tmp_path: Path) -> None:
    """A Retry-After of an hour is capped by --timeout: the read ends at the deadline with its flag named."""
    Recorded.faults = [
        Fault(
            PODS,
            status=429,
            headers={"Retry-After": "3600"},
            body=status_body(429, "TooManyRequests"),
            times=50,
        )
    ]
    line = _one_error(_snapshot(api_server, tmp_path, "--timeout", "1", "--retries", "10"))
    assert (
        line
        == f"error: {api_server} Pod: the read did not finish within 1s (--timeout); raise it for a large cluster"
    )


def test_forbidden_kind_names_the_rbac_rule(api_server: str, tmp_path: Path) -> None:
    message = 'nodeclaims.karpenter.sh is forbidden: User "ci" cannot list resource "nodeclaims"'
    Recorded.faults = [Fault(NODECLAIMS, status=403, body=status_body(403, "Forbidden", message))]
    line = _one_error(_snapshot(api_server, tmp_path))
    assert line.startswith(f"error: {api_server} NodeClaim: list is forbidden (HTTP 403) ({message})"), line
    assert 'add the RBAC rule apiGroups: ["karpenter.sh"], resources: ["nodeclaims"], verbs: ["list"]' in line


def test_forbidden_nodeclaims_fail_the_live_preview(api_server: str, tmp_path: Path) -> None:
    """The measured bug: a 403 on NodeClaims made `preview --cluster-state live` say "0 nodes would roll"."""
    kubeconfig = kubeconfig_for(api_server, tmp_path)
    stack = ROOT / "tests/data/pulumi/stacks/Pulumi.live-forbidden.yaml"
    text = (ROOT / "tests/data/pulumi/stacks/Pulumi.karpenter.yaml").read_text()
    stack.write_text(text + f"  nodewright:kubeconfig: {kubeconfig}\n")
    Recorded.faults = [Fault(NODECLAIMS, status=403, body=status_body(403, "Forbidden"))]
    try:
        res = _cli("preview", "--stack-file", str(stack), "--cluster-state", "live", "-o", "json")
    finally:
        stack.unlink()
    line = _one_error(res)
    assert line.startswith(f"error: {api_server} NodeClaim: list is forbidden (HTTP 403)"), line


def test_unserved_crd_kind_is_skipped_and_recorded(api_server: str, tmp_path: Path) -> None:
    res = _snapshot(api_server, tmp_path)
    assert res.returncode == 0, res.stderr
    assert f"warning: {api_server} CapacityBuffer: not served by the cluster (HTTP 404" in res.stderr
    doc = json.loads(res.stdout)
    record = doc["items"][-1]
    assert record["kind"] == "ClusterSnapshot"
    assert record["skippedKinds"] == [
        {"kind": "CapacityBuffer", "apiVersion": "autoscaling.x-k8s.io/v1beta1", "reason": "NotFound"}
    ]
    path = tmp_path / "snap.json"
    path.write_text(res.stdout)
    assert load_cluster(path).skipped_kinds == ("CapacityBuffer",)


def test_unserved_core_kind_is_an_error(api_server: str, tmp_path: Path) -> None:
    del Recorded.lists[KIND_PATH["PodDisruptionBudget"]]
    line = _one_error(_snapshot(api_server, tmp_path))
    assert line.startswith(f"error: {api_server} PodDisruptionBudget: the API server does not serve "), line


def test_429_with_retry_after_is_honoured(
    api_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import urllib3.util.retry

    slept: list[float] = []
    monkeypatch.setattr(urllib3.util.retry.time, "sleep", slept.append)
    Recorded.faults = [
        Fault(
            PODS, status=429, headers={"Retry-After": "2"}, body=status_body(429, "TooManyRequests"), times=2
        )
    ]
    state = load_live(kubeconfig=str(kubeconfig_for(api_server, tmp_path)), limits=_limits())
    assert len(state.pods) == len(load_cluster(EXAMPLE).pods)
    assert slept == [2.0, 2.0]
    assert sum(1 for s in Recorded.seen if s.startswith(PODS)) == 3


@pytest.mark.parametrize("fault", [Fault(PODS, status=500, body=status_body(500, "InternalError"), times=2),
                                   Fault(PODS, status=503, body=b"<html>upstream busy</html>", times=1),
                                   Fault(PODS, action="reset", times=2)], ids=["500", "503-html", "reset"])  # fmt: skip
def test_transient_failures_are_retried(api_server: str, tmp_path: Path, fault: Fault) -> None:
    times = fault.times
    Recorded.faults = [fault]
    state = load_live(kubeconfig=str(kubeconfig_for(api_server, tmp_path)), limits=_limits())
    assert len(state.pods) == len(load_cluster(EXAMPLE).pods)
    assert sum(1 for s in Recorded.seen if s.startswith(PODS)) == times + 1


def test_resets_past_the_retries_are_one_error(api_server: str, tmp_path: Path) -> None:
    Recorded.faults = [Fault(PODS, action="reset", times=10)]
    line = _one_error(_snapshot(api_server, tmp_path))
    assert line.startswith(f"error: {api_server} Pod: the connection broke 2 times"), line


def test_body_cut_short_is_retried_then_one_error(api_server: str, tmp_path: Path) -> None:
    """A response ending before its Content-Length (a proxy dropping the connection mid-body)."""
    cut = Fault(PODS, body=b'{"kind": "PodList", "items": [', headers={"Content-Length": "5000"}, times=10)
    Recorded.faults = [cut]
    line = _one_error(_snapshot(api_server, tmp_path))
    assert line.startswith(f"error: {api_server} Pod: the connection broke 2 times"), line
    assert "IncompleteRead" in line
    Recorded.faults = [
        Fault(PODS, body=b'{"kind": "PodList", "items": [', headers={"Content-Length": "5000"})
    ]
    state = load_live(kubeconfig=str(kubeconfig_for(api_server, tmp_path)), limits=_limits())
    assert len(state.pods) == len(load_cluster(EXAMPLE).pods)


def test_5xx_past_the_retries_is_one_error(api_server: str, tmp_path: Path) -> None:
    Recorded.faults = [
        Fault(
            PODS, status=500, body=status_body(500, "InternalError", "etcdserver: leader changed"), times=10
        )
    ]
    line = _one_error(_snapshot(api_server, tmp_path))
    assert (
        line
        == f"error: {api_server} Pod: listing failed: HTTP 500 Internal Server Error (etcdserver: leader changed)"
    )


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (Fault(PODS, body=b"<html><body>Sign in to the proxy</body></html>", headers={"Content-Type": "text/html"}),
         "Pod: the API server's response is not JSON (text/html; a proxy or login page?)"),
        (Fault(PODS, body=b'{"kind": "PodList", "apiVersion": "v1", "items": [{"metadata": '),
         "Pod: the API server's response is malformed JSON ("),
        (Fault(PODS, body={"kind": "PodList", "apiVersion": "v1", "items": {"name": "x"}}),
         "Pod:items: items is a JSON object, not an array"),
        (Fault(PODS, body={"kind": "PodList", "apiVersion": "v1", "items": [7]}),
         "Pod:items[0]: a JSON number, not an object"),
        (Fault(PODS, body=["not", "a", "list"]), "Pod: the API server's response is a JSON array, not a PodList"),
        (Fault(PODS, body=b"[" * 200_000 + b"]" * 200_000), "Pod: the API server's response is JSON nested too deeply"),
        (Fault(KIND_PATH["Node"], body={"kind": "Status", "apiVersion": "v1", "items": []}),
         "Node:kind: the API server returned a Status, not a NodeList"),
    ],
    ids=["html", "truncated", "items-object", "item-number", "array", "deep", "wrong-list-kind"],
)  # fmt: skip
def test_malformed_response_is_one_located_error(
    api_server: str, tmp_path: Path, fault: Fault, expected: str
) -> None:
    Recorded.faults = [fault]
    line = _one_error(_snapshot(api_server, tmp_path))
    assert line.startswith(f"error: {api_server} {expected}"), line


def test_expired_continue_token_relists_the_kind(
    api_server: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """client-go tools/pager: ListPager.List with FullListIfExpired falls back to one list without
    limit on ResourceExpired; ported from tools/pager/pager_test.go TestListPager_List, case
    "expires on second page and then lists"."""
    Recorded.faults = [
        Fault(PODS, status=410, body=status_body(410, "Expired", "continue too old"), on_continue=True)
    ]
    state = load_live(kubeconfig=str(kubeconfig_for(api_server, tmp_path)), page_size=20, limits=_limits())
    assert [p.key for p in state.pods] == [p.key for p in load_cluster(EXAMPLE).pods]
    pod_requests = [s for s in Recorded.seen if s.startswith(PODS)]
    assert pod_requests == [f"{PODS}?limit=20", f"{PODS}?limit=20&continue=20", PODS]
    assert "continue token expired (HTTP 410 Gone)" in caplog.text


def test_secret_inside_a_pod_list_is_refused(api_server: str, tmp_path: Path) -> None:
    secret = {
        "kind": "Secret",
        "apiVersion": "v1",
        "metadata": {"name": "db"},
        "data": {"password": "aHVudGVyMg=="},
    }
    Recorded.lists[PODS].insert(1, secret)
    res = _snapshot(api_server, tmp_path)
    line = _one_error(res)
    assert line.startswith(f"error: {api_server} Pod:items[1].kind: a Secret inside the Pod list: refused"), (
        line
    )
    assert "aHVudGVyMg" not in res.stderr + res.stdout
    Recorded.lists[PODS][1] = {
        k: v for k, v in secret.items() if k not in ("kind", "apiVersion")
    }  # kind dropped
    res = _snapshot(api_server, tmp_path)
    line = _one_error(res)
    assert line.startswith(
        f"error: {api_server} Pod:items[1]: an object with data (a Secret?) inside the Pod list"
    ), line
    assert "aHVudGVyMg" not in res.stderr + res.stdout


def test_v1beta1_nodeclaims_are_refused_naming_the_served_version(api_server: str, tmp_path: Path) -> None:
    Recorded.list_version[NODECLAIMS] = "karpenter.sh/v1beta1"
    line = _one_error(_snapshot(api_server, tmp_path))
    assert line.startswith(
        f"error: {api_server} NodeClaim:apiVersion: the API server serves karpenter.sh/v1beta1 NodeClaims; "
    ), line
    assert "migrate with Karpenter's v1 upgrade guide" in line


def test_cluster_serving_only_v1beta1_is_an_error_not_a_skip(api_server: str, tmp_path: Path) -> None:
    del Recorded.lists[NODECLAIMS]
    Recorded.discovery["/apis/karpenter.sh"]["versions"] = [
        {"groupVersion": "karpenter.sh/v1beta1", "version": "v1beta1"}
    ]
    line = _one_error(_snapshot(api_server, tmp_path))
    assert line.startswith(
        f"error: {api_server} NodeClaim: the API server serves karpenter.sh/v1beta1 NodeClaims"
    ), line


def test_controller_settings_are_recorded_and_read_back(api_server: str, tmp_path: Path) -> None:
    res = _snapshot(api_server, tmp_path)
    assert res.returncode == 0, res.stderr
    assert "hunter2" not in res.stdout and "LS0tLS1CRUdJTi" not in res.stdout  # env values never written
    record = json.loads(res.stdout)["items"][-1]
    assert record["karpenter"] == {
        "controller": "kube-system/karpenter",
        "settings": {
            "featureGates": "ReservedCapacity=true,SpotToSpotConsolidation=true,NodeRepair=false",
            "preferencePolicy": "Ignore",
            "minValuesPolicy": "BestEffort",
            "reservedENIs": "1",
            "vmMemoryOverheadPercent": "0.1",
            "ignoreDRARequests": "true",
        },
    }
    path = tmp_path / "snap.json"
    path.write_text(res.stdout)
    settings = resolve(snapshot=snapshot_settings(load_cluster(path)))
    assert settings.reserved_enis == 1 and settings.vm_memory_overhead_percent == 0.1
    assert settings.feature_gates.spot_to_spot_consolidation and settings.ignore_dra_requests
    assert settings.sources["feature_gates"] == "snapshot"
    live = load_live(kubeconfig=str(kubeconfig_for(api_server, tmp_path)), limits=_limits())
    assert snapshot_settings(live) == record["karpenter"]["settings"]  # one code path


def test_named_controller_that_is_missing_is_an_error(api_server: str, tmp_path: Path) -> None:
    line = _one_error(_snapshot(api_server, tmp_path, "--karpenter-namespace", "karpenter"))
    assert line.startswith(f"error: {api_server} Deployment: no Deployment karpenter/karpenter"), line


def test_new_kinds_keep_every_reader_working(api_server: str, tmp_path: Path) -> None:
    """A snapshot with workloads, PDBs, NodeOverlays and the record: plan, drift, health, validate read it quietly."""
    res = _snapshot(api_server, tmp_path)
    assert res.returncode == 0, res.stderr
    path = tmp_path / "snap.json"
    path.write_text(res.stdout)
    kinds = {i["kind"] for i in json.loads(res.stdout)["items"]}
    assert {
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "Job",
        "PodTemplate",
        "PodDisruptionBudget",
        "NodeOverlay",
    } <= kinds
    state = load_cluster(path)
    assert {k: len(v) for k, v in state.raw_objects.items()} == {
        "Deployment": 2, "ReplicaSet": 1, "StatefulSet": 1, "Job": 1, "PodTemplate": 1,
        "PodDisruptionBudget": 1, "NodeOverlay": 1,
    }  # fmt: skip
    for command in (
        ["plan", "-f", "stacks/nodepools.yaml", "--cluster", str(path), "-o", "json"],
        ["drift", "-f", "stacks/nodepools.yaml", "--cluster", str(path), "-o", "json"],
        ["health", "--cluster", str(path), "-o", "json"],
        ["validate", "-f", str(path), "-o", "json"],
    ):
        out = _cli(*command)
        assert out.returncode == 0, (command, out.stderr)
        # the one warning allowed: plan names the NodeOverlay it ignores with the gate off
        warnings = [
            w for w in out.stderr.splitlines() if "warning" in w and "NodeOverlay feature gate" not in w
        ]
        assert not warnings and "Traceback" not in out.stderr, (command, out.stderr)
        json.loads(out.stdout)


def test_expired_relist_is_one_error(api_server: str, tmp_path: Path) -> None:
    """Bounded: one relist only; pager_test.go TestListPager_List, case "expires on second page"
    (the ResourceExpired error is returned)."""
    gone = status_body(410, "Expired", "continue too old")
    Recorded.faults = [Fault(PODS, status=410, body=gone, on_continue=True),
                       Fault(PODS, status=410, body=gone, without_limit=True)]  # fmt: skip
    line = _one_error(_snapshot(api_server, tmp_path, "--page-size", "20"))
    assert line == f"error: {api_server} Pod: listing failed: HTTP 410 Gone (continue too old)"
