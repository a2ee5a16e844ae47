"""Generates large, deterministic inputs for the scale benchmarks (``bench/large.py``).

``write(dir, pools=100, nodes=10_000, pending=48, running_per_node=2)`` writes
``nodepools.yaml`` (``pools`` NodePools on one EC2NodeClass), ``nodeclasses.yaml`` and
``cluster.json`` (a ``kubectl get -A -o json`` List): per existing node a Node, its NodeClaim (half of
them stamped with a stale NodePool hash, so drift has work) and ``running_per_node`` bound pods; then
``pending`` unschedulable pods of a few shapes. Also a command line:

    python bench/bigcluster.py OUTDIR --pools 100 --nodes 10000 --pending 20000
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

from nodewright.drift import nodepool_hash

T0 = "2026-11-20T09:00:00Z"
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
TYPES = (("m5.xlarge", "4", "15896Mi"), ("c5.2xlarge", "8", "15384Mi"), ("m5.2xlarge", "8", "31792Mi"))
UNSCHEDULABLE = {
    "phase": "Pending",
    "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastTransitionTime": T0}
    ],
}


def nodepool(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": f"pool-{i:03d}"},
        "spec": {
            "template": {
                "metadata": {"labels": {"team": f"team-{i % 10}"}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": [
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                        {
                            "key": "karpenter.k8s.aws/instance-category",
                            "operator": "In",
                            "values": ["c", "m", "r"],
                        },
                    ],
                    "expireAfter": "720h",
                },
            },
            "limits": {"cpu": "100000"},
            "weight": 1 + i % 50,
        },
    }


NODECLASS = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "default"},
    "spec": {
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "role": "KarpenterNodeRole-demo",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
    },
}


def _pod(name: str, cpu: str, mem: str, *, node: str | None, app: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "app",
                "image": "registry.example.com/app:1",
                "resources": {"requests": {"cpu": cpu, "memory": mem}},
            }
        ]
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "labels": {"app": app},
            "creationTimestamp": T0,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": app,
                    "uid": f"uid-rs-{app}",
                    "controller": True,
                }
            ],
        },
        "spec": spec,
        "status": {"phase": "Running"} if node else UNSCHEDULABLE,
    }


def daemonset(k: int) -> dict[str, Any]:
    """The ``k``-th DaemonSet (a node agent tolerating every taint)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": f"agent-{k}", "namespace": "kube-system", "uid": f"uid-agent-{k}"},
        "spec": {
            "selector": {"matchLabels": {"app": f"agent-{k}"}},
            "template": {"metadata": {"labels": {"app": f"agent-{k}"}}, "spec": _AGENT},
        },
    }


_AGENT: dict[str, Any] = {
    "containers": [
        {
            "name": "agent",
            "image": "registry.example.com/agent:1",
            "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
        }
    ],
    "tolerations": [{"operator": "Exists"}],
}


def _agent_pod(k: int, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"agent-{k}-{node}",
            "namespace": "kube-system",
            "uid": f"uid-agent-{k}-{node}",
            "labels": {"app": f"agent-{k}"},
            "creationTimestamp": T0,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "name": f"agent-{k}",
                    "uid": f"uid-agent-{k}",
                    "controller": True,
                }
            ],
        },
        "spec": {**_AGENT, "nodeName": node},
        "status": {"phase": "Running"},
    }


def cluster(
    pools: int, nodes: int, pending: int, running_per_node: int = 2, seed: int = 7, daemonsets: int = 0
) -> dict[str, Any]:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    hashes = {}
    for i in range(pools):
        pool = nodepool(i)
        h = nodepool_hash(pool)
        hashes[pool["metadata"]["name"]] = h
        pool["metadata"].update(
            uid=f"uid-pool-{i}",
            generation=1,
            annotations={"karpenter.sh/nodepool-hash": h, "karpenter.sh/nodepool-hash-version": "v3"},
        )
        pool["status"] = {
            "conditions": [
                {"type": t, "status": "True", "reason": t, "lastTransitionTime": T0, "observedGeneration": 1}
                for t in ("ValidationSucceeded", "NodeClassReady", "NodeRegistrationHealthy", "Ready")
            ]
        }
        items.append(pool)
    for n in range(nodes):
        pool = f"pool-{n % pools:03d}"
        zone = ZONES[n % 3]
        itype, cpu, mem = TYPES[n % 3]
        name = f"ip-10-{n // 65536}-{n // 256 % 256}-{n % 256}.ec2.internal"
        claim = f"{pool}-{n:06x}"
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/os": "linux",
            "topology.kubernetes.io/zone": zone,
            "topology.kubernetes.io/region": "us-east-1",
            "node.kubernetes.io/instance-type": itype,
            "karpenter.sh/nodepool": pool,
            "karpenter.sh/capacity-type": "on-demand",
            "karpenter.sh/registered": "true",
            "karpenter.sh/initialized": "true",
            "karpenter.k8s.aws/ec2nodeclass": "default",
            "karpenter.k8s.aws/instance-category": itype[0],
            "team": f"team-{(n % pools) % 10}",
        }
        ann = {
            "karpenter.sh/nodepool-hash": hashes[pool] if n % 2 else "1",
            "karpenter.sh/nodepool-hash-version": "v3",
        }
        provider = f"aws:///{zone}/i-{n:017x}"
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "uid": f"uid-node-{n}",
                    "labels": labels,
                    "annotations": ann,
                    "creationTimestamp": T0,
                },
                "spec": {"providerID": provider},
                "status": {
                    "capacity": {"cpu": cpu, "memory": mem, "pods": "58"},
                    "allocatable": {
                        "cpu": f"{int(cpu) * 1000 - 180}m",
                        "memory": f"{int(mem[:-2]) - 1100}Mi",
                        "pods": "58",
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
                "metadata": {
                    "name": claim,
                    "uid": f"uid-claim-{n}",
                    "labels": {k: v for k, v in labels.items() if k != "kubernetes.io/hostname"},
                    "annotations": ann,
                    "creationTimestamp": T0,
                    "ownerReferences": [
                        {
                            "apiVersion": "karpenter.sh/v1",
                            "kind": "NodePool",
                            "name": pool,
                            "uid": f"uid-pool-{n % pools}",
                        }
                    ],
                },
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": [
                        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [itype]},
                        {"key": "karpenter.sh/nodepool", "operator": "In", "values": [pool]},
                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]},
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                    ],
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi", "pods": "3"}},
                },
                "status": {
                    "nodeName": name,
                    "providerID": provider,
                    "capacity": {"cpu": cpu, "memory": mem, "pods": "58"},
                    "conditions": [
                        {"type": t, "status": "True", "reason": t, "lastTransitionTime": T0}
                        for t in ("Launched", "Registered", "Initialized", "Ready")
                    ],
                },
            }
        )
        for k in range(running_per_node):
            items.append(_pod(f"run-{n}-{k}", "100m", "128Mi", node=name, app=f"svc-{n % 40}"))
        items.extend(_agent_pod(k, name) for k in range(daemonsets))
    for p in range(pending):
        cpu = rng.choice(("250m", "500m", "1", "2"))
        mem = rng.choice(("256Mi", "512Mi", "1Gi", "2Gi"))
        items.append(_pod(f"pend-{p}", cpu, mem, node=None, app=f"web-{p % 25}"))
    items.extend(daemonset(k) for k in range(daemonsets))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def write(
    out: Path,
    *,
    pools: int = 100,
    nodes: int = 10_000,
    pending: int = 48,
    running_per_node: int = 2,
    daemonsets: int = 0,
) -> None:
    import yaml

    out.mkdir(parents=True, exist_ok=True)
    (out / "nodepools.yaml").write_text(
        yaml.safe_dump_all([nodepool(i) for i in range(pools)], sort_keys=False)
    )
    (out / "nodeclasses.yaml").write_text(yaml.safe_dump(NODECLASS, sort_keys=False))
    (out / "cluster.json").write_text(
        json.dumps(cluster(pools, nodes, pending, running_per_node, daemonsets=daemonsets))
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--pools", type=int, default=100)
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--pending", type=int, default=48)
    ap.add_argument("--running-per-node", type=int, default=2)
    ap.add_argument("--daemonsets", type=int, default=0, help="DaemonSets, each with a pod on every node")
    a = ap.parse_args()
    write(
        a.out,
        pools=a.pools,
        nodes=a.nodes,
        pending=a.pending,
        running_per_node=a.running_per_node,
        daemonsets=a.daemonsets,
    )


if __name__ == "__main__":
    main()
