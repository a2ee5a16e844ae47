"""Cluster state from kubectl files and from a live API server (recorded responses on loopback)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver_harness import EXAMPLE, LIST_API_VERSION, ROOT, Recorded, kubeconfig_for, serve

from nodewright.cluster import load_cluster
from nodewright.cluster.live import load_live
from nodewright.errors import NodewrightError


def test_example_cluster_file() -> None:
    state = load_cluster(EXAMPLE)
    assert len(state.nodes) == 2
    assert len(state.nodeclaims) == 2
    assert len(state.daemonsets) == 3
    assert state.node("ip-10-0-1-17.ec2.internal") is not None
    assert len(state.pods_on("ip-10-0-1-17.ec2.internal")) == 3


def test_pod_views_follow_the_pods_of_a_copy() -> None:
    """``unbound_pods``/``affinity_pods`` are views of the state's own pods: a copy made with
    other pods (``dataclasses.replace``, which shares the views' memo) never answers from the
    original's."""
    state = load_cluster(EXAMPLE)
    bound = state.unbound_pods()
    assert [p.key for p in bound] == [p.key for p in state.pods if not p.spec.node_name]
    pending = state.pods[0].model_copy(
        update={"spec": state.pods[0].spec.model_copy(update={"node_name": None})}
    )
    copy = dataclasses.replace(state, pods=(pending, *state.pods[1:]))
    assert pending in copy.unbound_pods()
    assert pending not in state.unbound_pods()
    assert [p.key for p in copy.affinity_pods()] == [p.key for p in copy.pods if p.spec.affinity is not None]


def test_pod_with_bad_quantity_names_path(tmp_path: Path) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1..5"}}}]},
            }
        ],
    }
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(body))
    with pytest.raises(NodewrightError) as info:
        load_cluster(path)
    (line,) = info.value.lines()
    assert line.startswith(f"{path}:items[0].spec.containers[0].resources.requests.cpu: invalid quantity")


def test_pods_sharing_a_spec_each_report_their_own_problems(tmp_path: Path) -> None:
    """Pods of one workload share their validated spec: a clean spec is checked once, a bad one is
    reported at every pod, and a later pod's missing name is still found."""
    good = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    bad = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1..5"}}}]}

    def pod(name: str | None, spec: dict[str, object]) -> dict[str, object]:
        meta = {"namespace": "default", **({"name": name} if name else {})}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

    items = [pod("a", good), pod("b", bad), pod("c", good), pod("d", bad), pod(None, good), pod("e", good)]
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    with pytest.raises(NodewrightError) as info:
        load_cluster(path)
    assert [line.removeprefix(f"{path}:").split(":")[0] for line in info.value.lines()] == [
        "items[1].spec.containers[0].resources.requests.cpu",
        "items[3].spec.containers[0].resources.requests.cpu",
        "items[4].metadata.name",
    ]
    path.write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": items[:1] + items[2:3] + items[5:]})
    )
    assert [p.metadata.name for p in load_cluster(path).pods] == ["a", "c", "e"]


def test_pod_shapes_equal_the_one_pod_check() -> None:
    """PodShapes (over many pods) says what check_pod_shape says of each pod alone."""
    from nodewright.api.core import Pod
    from nodewright.api.validation import PodShapes, check_pod_shape
    from nodewright.errors import Collector

    specs = [
        {"containers": [{"name": "c", "resources": {"requests": {"cpu": v}}}]} for v in ("1", "x", "2Gi", "-")
    ]
    shared = [Pod.model_validate({"spec": s}).spec for s in specs]
    pods = [
        Pod.model_validate({"metadata": {"name": n}}).model_copy(update={"spec": shared[i % len(shared)]})
        for i, n in enumerate(["a", "", "c", "d", "", "f", "g", "h", "i"])
    ]
    many = PodShapes()
    for i, p in enumerate(pods):
        p.set_origin("f", f"items[{i}]")
        alone, together = Collector("f"), Collector("f")
        check_pod_shape(p, alone)
        many(p, together)
        assert together.problems == alone.problems


def test_pod_without_name(tmp_path: Path) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(
        json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "spec": {}}]}
        )
    )
    with pytest.raises(NodewrightError, match=r"items\[0\]\.metadata\.name: a Pod needs metadata.name"):
        load_cluster(path)


@pytest.fixture
def api_server() -> Iterator[str]:
    with serve() as url:
        yield url


def test_live_loader_against_recorded_api(
    api_server: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kubeconfig = kubeconfig_for(api_server, tmp_path)
    live = load_live(kubeconfig=str(kubeconfig), page_size=20)
    from_file = load_cluster(EXAMPLE)
    assert [p.key for p in live.pods] == [p.key for p in from_file.pods]
    for kind in ("pods", "nodes", "nodeclaims", "daemonsets"):
        assert [o.model_dump() for o in getattr(live, kind)] == [
            o.model_dump() for o in getattr(from_file, kind)
        ]
    assert live.pods[0].origin_file == "live:current-context"
    assert live.pods[0].origin_path() == "/api/v1/pods[0]"
    assert any("continue=20" in s for s in Recorded.seen)  # pagination followed
    assert f"{api_server} CapacityBuffer: not served by the cluster (HTTP 404" in caplog.text
    assert live.skipped_kinds == ("CapacityBuffer",)
    assert [d.name for d in live.raw("Deployment")] == ["karpenter", "web"]
    assert live.karpenter_controller == "kube-system/karpenter"


def test_snapshot_command_pages_every_kind_and_never_secrets(api_server: str, tmp_path: Path) -> None:
    """`nodewright cluster snapshot` against the loopback API server: typed lists, `continue` paging."""
    from click.testing import CliRunner

    from nodewright.cli import main

    kubeconfig = kubeconfig_for(api_server, tmp_path)
    res = CliRunner().invoke(
        main, ["cluster", "snapshot", "--kubeconfig", str(kubeconfig), "--page-size", "7", "-o", "json"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["kind"] == "List"
    kinds = {i["kind"] for i in doc["items"]}
    assert {"Pod", "Node", "DaemonSet", "NodeClaim", "NodePool", "EC2NodeClass", "StorageClass"} <= kinds
    assert all(i["apiVersion"] for i in doc["items"])  # filled in from the typed list's kind
    assert not any("managedFields" in i["metadata"] for i in doc["items"])
    assert sum(1 for s in Recorded.seen if s.startswith("/api/v1/pods")) > 2  # paged with limit=7
    assert any("continue=7" in s for s in Recorded.seen)
    assert not any("secret" in s.lower() for s in Recorded.seen)
    assert "listing Pod: 7" in res.stderr and "snapshot:" in res.stderr
    assert f"{api_server} CapacityBuffer: not served by the cluster (HTTP 404" in res.stderr
    # The snapshot is a valid --cluster input and equals the file it was recorded from.
    path = tmp_path / "snap.json"
    path.write_text(res.stdout)
    state = load_cluster(path)
    assert [p.key for p in state.pods] == [p.key for p in load_cluster(EXAMPLE).pods]
    assert [n.metadata.name for n in state.nodeclasses] == ["default"]
    yaml_res = CliRunner().invoke(
        main, ["cluster", "snapshot", "--kubeconfig", str(kubeconfig), "-o", "yaml", "-q"]
    )
    assert yaml_res.exit_code == 0 and "listing" not in yaml_res.stderr and "kind: List" in yaml_res.stdout


def test_snapshot_unreachable_server_is_one_error_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from nodewright.cli import main

    kubeconfig = kubeconfig_for("http://127.0.0.1:9", tmp_path)
    res = CliRunner().invoke(main, ["cluster", "snapshot", "--kubeconfig", str(kubeconfig), "-q"])
    assert res.exit_code == 1
    lines = [x for x in res.stderr.splitlines() if x]
    assert len(lines) == 1 and lines[0].startswith(
        "error: http://127.0.0.1:9 Pod: cannot reach the API server"
    ), lines


def _typed_lists(tmp_path: Path) -> Path:
    """The example state as `kubectl cluster-info dump --output-directory` lays it out: typed lists."""
    items = json.loads(EXAMPLE.read_text())["items"]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_kind.setdefault(item["kind"], []).append(
            {k: v for k, v in item.items() if k not in ("kind", "apiVersion")}
        )
    root = tmp_path / "dump"
    for kind, kind_items in by_kind.items():
        sub = root / ("default" if kind == "Pod" else "")
        sub.mkdir(parents=True, exist_ok=True)
        body = {
            "kind": f"{kind}List",
            "apiVersion": LIST_API_VERSION[kind],
            "metadata": {},
            "items": kind_items,
        }
        (sub / f"{kind.lower()}s.json").write_text(json.dumps(body, indent=1))
    (root / "default" / "logs.txt").write_text("not a list")
    return root


def test_typed_lists_and_directory(tmp_path: Path) -> None:
    root = _typed_lists(tmp_path)
    from_dir = load_cluster(root)
    from_file = load_cluster(EXAMPLE)
    assert [p.key for p in from_dir.pods] == [p.key for p in from_file.pods]
    assert len(from_dir.nodes) == 2 and len(from_dir.nodeclaims) == 2 and len(from_dir.daemonsets) == 3
    one = load_cluster(root / "nodes.json")
    assert one.nodes[0].origin_path() == "items[0]"


def test_concatenated_json_and_stdin(tmp_path: Path) -> None:
    """`kubectl cluster-info dump` prints its lists one after another; `-` reads stdin."""
    from click.testing import CliRunner

    from nodewright.cli import main

    root = _typed_lists(tmp_path)
    text = "\n".join(p.read_text() for p in sorted(root.rglob("*.json")))
    res = CliRunner().invoke(
        main, ["health", "--cluster", "-", "-o", "json", "--now", "2026-11-22T12:00:00Z"], input=text
    )
    assert res.exit_code == 0, res.output
    direct = CliRunner().invoke(
        main, ["health", "--cluster", str(EXAMPLE), "-o", "json", "--now", "2026-11-22T12:00:00Z"]
    )
    assert json.loads(res.stdout)["nodePools"] == json.loads(direct.stdout)["nodePools"]


def test_empty_state_warns_naming_the_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": []}))
    load_cluster(path)
    assert f"{path}: the cluster state has no nodes and no pods" in caplog.text


def test_live_stack_setting_reads_the_cluster(api_server: str, tmp_path: Path) -> None:
    """`nodewright:clusterState: live` + `nodewright:kubeconfig`: the preview's drift comes from the API server."""
    from click.testing import CliRunner

    from nodewright.cli import main

    kubeconfig = kubeconfig_for(api_server, tmp_path)
    stack = ROOT / "tests/data/pulumi/stacks/Pulumi.live.yaml"
    text = (ROOT / "tests/data/pulumi/stacks/Pulumi.karpenter.yaml").read_text()
    stack.write_text(text + f"  nodewright:clusterState: live\n  nodewright:kubeconfig: {kubeconfig}\n")
    try:
        res = CliRunner().invoke(main, ["preview", "--stack-file", str(stack), "-o", "json"])
    finally:
        stack.unlink()
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["drift"]["clusterState"] == "live"
    assert doc["drift"]["summary"]["nodeClaims"] == 2
    assert any(s.startswith("/apis/karpenter.sh/v1/nodeclaims") for s in Recorded.seen)


def test_snapshot_keeps_no_env_values_or_last_applied(api_server: str, tmp_path: Path) -> None:
    """A snapshot may be committed: container env values and last-applied manifests never land in it."""
    from click.testing import CliRunner

    from nodewright.cli import main

    pod = {
        "metadata": {
            "name": "leaky",
            "namespace": "default",
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": '{"password": "hunter2"}',
                "a": "b",
            },
        },
        "spec": {
            "containers": [{"name": "c", "env": [{"name": "DB_PASSWORD", "value": "hunter2"}]}],
            "initContainers": [{"name": "i", "env": [{"name": "TOKEN", "value": "hunter2"}]}],
        },
    }
    Recorded.lists["/api/v1/pods"].append(pod)
    ds = Recorded.lists["/apis/apps/v1/daemonsets"][0]
    ds["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "KEY", "value": "hunter2"}]
    kubeconfig = kubeconfig_for(api_server, tmp_path)
    res = CliRunner().invoke(main, ["cluster", "snapshot", "--kubeconfig", str(kubeconfig), "-q"])
    assert res.exit_code == 0, res.output
    assert "hunter2" not in res.stdout
    doc = json.loads(res.stdout)
    leaky = next(i for i in doc["items"] if i["metadata"]["name"] == "leaky")
    assert leaky["spec"]["containers"][0]["env"] == [{"name": "DB_PASSWORD"}]
    assert leaky["metadata"]["annotations"] == {"a": "b"}


def test_snapshot_without_kubeconfig_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from nodewright.cli import main

    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    missing = tmp_path / "nope"
    res = CliRunner().invoke(main, ["cluster", "snapshot", "--kubeconfig", str(missing), "-q"])
    assert res.exit_code == 1
    lines = [x for x in res.stderr.splitlines() if x]
    assert len(lines) == 1 and lines[0].startswith(f"error: {missing}: cannot load kubeconfig"), lines
