"""Developer tool: regenerates stacks/examples/cluster.json, a FICTIONAL example cluster state
(kubectl get ... -A -o json; for the docs and tests, never a stack's default).

Run from the repository root: ``PYTHONPATH=. .venv/bin/python tools/generate_cluster.py``.

Deterministic: running it again gives the same file. A realistic mid-size picture: two Karpenter
nodes already running, three daemonsets, and ~50 pending pods of varied shapes (spread, anti-
affinity, spot-only, GPU, preferences, and two that cannot schedule, to show the reasons).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import yaml

from nodewright.drift import nodepool_hash

T0 = "2026-11-20T09:00:00Z"
STACKS = Path(__file__).resolve().parents[1] / "stacks"
EXAMPLE = STACKS / "examples" / "cluster.json"


def meta(
    name: str, ns: str | None = "default", labels: dict[str, str] | None = None, **extra: Any
) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "uid": f"uid-{ns or 'cluster'}-{name}", "creationTimestamp": T0}
    if ns:
        m["namespace"] = ns
    if labels:
        m["labels"] = labels
    m.update(extra)
    return m


def container(
    cpu: str, memory: str, *, gpu: int = 0, name: str = "app", port: int | None = None
) -> dict[str, Any]:
    req: dict[str, Any] = {"cpu": cpu, "memory": memory}
    res: dict[str, Any] = {"requests": req}
    if gpu:
        req["nvidia.com/gpu"] = str(gpu)
        res["limits"] = {"nvidia.com/gpu": str(gpu)}
    c: dict[str, Any] = {"name": name, "image": f"registry.example.com/{name}:1.0", "resources": res}
    if port:
        c["ports"] = [{"containerPort": port, "hostPort": port, "protocol": "TCP"}]
    return c


PENDING_STATUS = {
    "phase": "Pending",
    "conditions": [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/2 nodes are available: 2 Insufficient cpu.",
            "lastTransitionTime": T0,
        }
    ],
}


def pod(
    name: str, labels: dict[str, str], spec: dict[str, Any], *, ns: str = "default", owner: str | None = None
) -> dict[str, Any]:
    md = meta(name, ns, labels)
    if owner:
        md["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": owner,
                "uid": f"uid-rs-{owner}",
                "controller": True,
            }
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": PENDING_STATUS}


def live_nodepool() -> dict[str, Any]:
    """The ``default`` NodePool as it runs in the cluster today: the branch in stacks/ adds the
    ``workload-class: general`` label, so a preview shows its NodeClaims drifting."""
    path = STACKS / "nodepools.yaml"
    pool = next(d for d in yaml.safe_load_all(path.read_text()) if d["metadata"]["name"] == "default")
    del pool["spec"]["template"]["metadata"]["labels"]["workload-class"]
    pool["metadata"].update(uid="uid-nodepool-default", generation=3, creationTimestamp=T0)
    pool["metadata"]["annotations"] = {
        "karpenter.sh/nodepool-hash": nodepool_hash(pool),
        "karpenter.sh/nodepool-hash-version": "v3",
    }
    pool["status"] = {
        "conditions": [
            {"type": t, "status": "True", "reason": t, "lastTransitionTime": T0, "observedGeneration": 3}
            for t in ("ValidationSucceeded", "NodeClassReady", "NodeRegistrationHealthy", "Ready")
        ],
        "nodeClassObservedGeneration": 1,
        "resources": {"cpu": "12", "memory": "31280Mi", "nodes": "2", "pods": "116"},
    }
    return pool


NODES: list[tuple[str, str, str, str]] = [
    ("ip-10-0-1-17.ec2.internal", "us-east-1a", "m5.xlarge", "default-x7k2p"),
    ("ip-10-0-2-41.ec2.internal", "us-east-1b", "c5.2xlarge", "default-q9m4t"),
]


def existing_nodes(live_hash: str) -> list[dict[str, Any]]:
    """Two Karpenter nodes of the default pool, each with its NodeClaim."""
    items: list[dict[str, Any]] = []
    for name, zone, itype, claim in NODES:
        cpu, mem = ("4", "15896Mi") if itype == "m5.xlarge" else ("8", "15384Mi")
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/os": "linux",
            "topology.kubernetes.io/zone": zone,
            "topology.kubernetes.io/region": "us-east-1",
            "node.kubernetes.io/instance-type": itype,
            "karpenter.sh/nodepool": "default",
            "karpenter.sh/capacity-type": "on-demand",
            "karpenter.sh/registered": "true",
            "karpenter.sh/initialized": "true",
            "karpenter.k8s.aws/ec2nodeclass": "default",
            "karpenter.k8s.aws/instance-category": itype[0],
            "karpenter.k8s.aws/instance-generation": "5",
            "team": "platform",
        }
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": meta(
                    name,
                    None,
                    labels,
                    annotations={
                        "karpenter.sh/nodepool-hash": live_hash,
                        "karpenter.sh/nodepool-hash-version": "v3",
                    },
                ),
                "spec": {"providerID": f"aws:///{zone}/i-0{sum(map(ord, name)) * 7919:012d}"},
                "status": {
                    "capacity": {"cpu": cpu, "memory": mem, "pods": "58", "ephemeral-storage": "50Gi"},
                    "allocatable": {
                        "cpu": str(int(cpu) * 1000 - 180) + "m",
                        "memory": str(int(mem[:-2]) - 1100) + "Mi",
                        "pods": "58",
                        "ephemeral-storage": "45Gi",
                    },
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": "True",
                            "reason": "KubeletReady",
                            "lastTransitionTime": T0,
                        }
                    ],
                },
            }
        )
        items.append(
            {
                "apiVersion": "karpenter.sh/v1",
                "kind": "NodeClaim",
                "metadata": meta(
                    claim,
                    None,
                    {k: v for k, v in labels.items() if k != "kubernetes.io/hostname"},
                    annotations={
                        "karpenter.sh/nodepool-hash": live_hash,
                        "karpenter.sh/nodepool-hash-version": "v3",
                    },
                    ownerReferences=[
                        {
                            "apiVersion": "karpenter.sh/v1",
                            "kind": "NodePool",
                            "name": "default",
                            "uid": "uid-nodepool-default",
                            "blockOwnerDeletion": True,
                        }
                    ],
                ),
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": [
                        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [itype]},
                        {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["default"]},
                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]},
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                    ],
                    "resources": {"requests": {"cpu": "2", "memory": "4Gi", "pods": "6"}},
                    "expireAfter": "720h",
                },
                "status": {
                    "nodeName": name,
                    "providerID": f"aws:///{zone}/i-0{sum(map(ord, name)) * 7919:012d}",
                    "capacity": {"cpu": cpu, "memory": mem, "pods": "58"},
                    "conditions": [
                        {"type": t, "status": "True", "reason": t, "lastTransitionTime": T0}
                        for t in ("Launched", "Registered", "Initialized", "Ready")
                    ],
                },
            }
        )
    return items


def running_pods() -> list[dict[str, Any]]:
    """Pods already bound to the existing nodes."""
    items: list[dict[str, Any]] = []
    for i, (node, *_rest) in enumerate(NODES):
        for j in range(3):
            items.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": meta(f"api-running-{i}{j}", "default", {"app": "api"}),
                    "spec": {"nodeName": node, "containers": [container("500m", "1Gi")]},
                    "status": {
                        "phase": "Running",
                        "conditions": [{"type": "PodScheduled", "status": "True"}],
                    },
                }
            )
    return items


def daemonsets() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for name, cpu, mem, tol in (
        ("aws-node", "25m", "64Mi", True),
        ("kube-proxy", "100m", "128Mi", True),
        ("nvidia-device-plugin", "50m", "100Mi", False),
    ):
        spec: dict[str, Any] = {
            "containers": [container(cpu, mem, name=name)],
            "priorityClassName": "system-node-critical",
        }
        if tol:
            spec["tolerations"] = [{"operator": "Exists"}]
        else:
            spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
            spec["nodeSelector"] = {"workload-class": "gpu"}
        items.append(
            {
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": meta(name, "kube-system", {"k8s-app": name}),
                "spec": {
                    "selector": {"matchLabels": {"k8s-app": name}},
                    "template": {"metadata": {"labels": {"k8s-app": name}}, "spec": spec},
                },
            }
        )
    return items


def _spread(app: str) -> dict[str, Any]:
    return {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    }


def _anti_affinity(app: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


def _prefer_zone(zone: str, weight: int) -> dict[str, Any]:
    expr = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}
    preferred = [{"weight": weight, "preference": {"matchExpressions": [expr]}}]
    return {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}}}


GPU_TOLERATION: Final = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

# (name pattern, count, app, namespace, owner ReplicaSet, container, extra pod spec)
WORKLOADS: Final[list[tuple[str, int, str, str, str | None, dict[str, Any], dict[str, Any]]]] = [
    ("web-{i:02d}", 12, "web", "default", "web-7d9f", container("500m", "512Mi"), _spread("web")),
    (
        "checkout-{i}",
        8,
        "checkout",
        "shop",
        "checkout-5c8b",
        container("1", "2Gi"),
        _anti_affinity("checkout"),
    ),
    (
        "batch-{i:02d}",
        15,
        "batch",
        "jobs",
        "batch-6f2a",
        container("250m", "256Mi"),
        {"nodeSelector": {"karpenter.sh/capacity-type": "spot"}},
    ),
    ("cache-{i}", 3, "cache", "default", "cache-1a2b", container("2", "8Gi"), _prefer_zone("us-east-1a", 50)),
    (
        "train-{i}",
        4,
        "train",
        "ml",
        "train-9e8d",
        container("4", "16Gi", gpu=1, name="trainer"),
        {"tolerations": [GPU_TOLERATION], "nodeSelector": {"workload-class": "gpu"}},
    ),
    ("ingress-{i}", 4, "ingress", "ingress", "ingress-3c4d", container("200m", "256Mi", port=8443), {}),
    # two that cannot schedule, to show the reasons: too big for any type, and arm64 nowhere allowed
    ("sql-export-huge", 1, "export", "data", None, container("600", "64Gi"), {}),
    (
        "legacy-arm",
        1,
        "legacy",
        "data",
        None,
        container("1", "1Gi"),
        {"nodeSelector": {"kubernetes.io/arch": "arm64"}},
    ),
]


def pending_pods() -> list[dict[str, Any]]:
    """Pending pods of varied shapes (:data:`WORKLOADS`), two of which cannot schedule."""
    return [
        pod(pattern.format(i=i), {"app": app}, {"containers": [c], **extra}, ns=ns, owner=owner)
        for pattern, count, app, ns, owner, c, extra in WORKLOADS
        for i in range(count)
    ]


def build() -> str:
    """The text of stacks/examples/cluster.json."""
    pool = live_nodepool()
    live_hash = pool["metadata"]["annotations"]["karpenter.sh/nodepool-hash"]
    items = [pool, *existing_nodes(live_hash), *running_pods(), *daemonsets(), *pending_pods()]
    doc = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}
    return json.dumps(doc, indent=2) + "\n"


def main() -> None:
    out = EXAMPLE
    out.write_text(build())
    items = json.loads(out.read_text())["items"]
    print(
        f"wrote {out} ({sum(1 for i in items if i['kind'] == 'Pod' and 'nodeName' not in i['spec'])} pending pods)"
    )


if __name__ == "__main__":
    main()
