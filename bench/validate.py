"""Benchmark: validate 1,000 NodePools + 1,000 EC2NodeClasses through the one loading path.

``python bench/validate.py [N]``: builds N varied NodePools and N EC2NodeClasses (labels, taints,
requirements, budgets, kubelet, block devices, tags), then times, on one core:

* ``admit``: :func:`nodewright.crd.admit_object` alone (schema, CEL rules, defaults, runtime checks);
* ``load``: :func:`nodewright.api.loading.objects_from_documents` (admission + pydantic models),
  what every command runs after parsing;
* ``update``: every object admitted as an update of itself with one field changed
  (:func:`nodewright.crd.admit_object` with ``old``: the old object admitted as stored, then the new
  one with transition rules and ratcheting), what ``validate --base`` runs per paired object.

The CRDs are compiled first (once per process, reported separately). Times are CPU time of this
process (the build machine is shared; wall time is noisier). Figures go into README.md
(Performance). No assertion: CI does not time anything.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from nodewright import crd
from nodewright.api.documents import Document
from nodewright.api.loading import objects_from_documents


def nodepool(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": f"pool-{i}", "labels": {"team": f"t{i % 7}"}},
        "spec": {
            "weight": 1 + i % 100,
            "limits": {"cpu": str(100 + i), "memory": f"{i + 1}Gi"},
            "disruption": {
                "consolidationPolicy": ("WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced")[i % 3],
                "consolidateAfter": f"{i % 60}m",
                "budgets": [
                    {"nodes": "10%"},
                    {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"},
                ],
            },
            "template": {
                "metadata": {
                    "labels": {"example.com/team": f"t{i % 7}", "node-role.kubernetes.io/worker": ""},
                    "annotations": {"example.com/owner": "platform"},
                },
                "spec": {
                    "nodeClassRef": {
                        "group": "karpenter.k8s.aws",
                        "kind": "EC2NodeClass",
                        "name": f"class-{i}",
                    },
                    "expireAfter": "720h" if i % 2 else "Never",
                    "taints": [
                        {"key": "example.com/dedicated", "value": f"t{i % 7}", "effect": "NoSchedule"}
                    ],
                    "startupTaints": [{"key": "example.com/init", "effect": "NoExecute"}],
                    "requirements": [
                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]},
                        {
                            "key": "karpenter.sh/capacity-type",
                            "operator": "In",
                            "values": ["spot", "on-demand"],
                        },
                        {
                            "key": "karpenter.k8s.aws/instance-category",
                            "operator": "In",
                            "values": ["c", "m", "r"],
                        },
                        {
                            "key": "karpenter.k8s.aws/instance-generation",
                            "operator": "Gt",
                            "values": [str(2 + i % 4)],
                        },
                        {
                            "key": "topology.kubernetes.io/zone",
                            "operator": "In",
                            "values": ["us-east-1a", "us-east-1b"],
                        },
                    ],
                },
            },
        },
    }


def nodeclass(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": f"class-{i}"},
        "spec": {
            "amiSelectorTerms": [{"alias": ("al2023@latest", "bottlerocket@latest", "al2@latest")[i % 3]}],
            "role": f"KarpenterNodeRole-{i}",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}, {"id": f"subnet-{i:08x}"}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "tags": {"team": f"t{i % 7}", "cost-center": str(i)},
            "kubelet": {
                "maxPods": 110,
                "systemReserved": {"cpu": "100m", "memory": "100Mi"},
                "evictionHard": {"memory.available": "5%"},
                "evictionSoft": {"memory.available": "10%"},
                "evictionSoftGracePeriod": {"memory.available": "1m"},
                "imageGCHighThresholdPercent": 85,
                "imageGCLowThresholdPercent": 80,
            },
            "blockDeviceMappings": [
                {
                    "deviceName": "/dev/xvda",
                    "rootVolume": True,
                    "ebs": {"volumeSize": f"{20 + i % 100}Gi", "volumeType": "gp3", "encrypted": True},
                }
            ],
            "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 2},
        },
    }


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    t0 = time.process_time()
    for kind in ("NodePool", "EC2NodeClass"):
        crd.crd(kind)
    compile_s = time.process_time() - t0
    bodies = [nodepool(i) for i in range(n)] + [nodeclass(i) for i in range(n)]
    docs = [Document(file="bench.yaml", path=f"documents[{i}]", body=b) for i, b in enumerate(bodies)]

    t0 = time.process_time()
    bad = sum(not crd.admit_object(b, kind=b["kind"]).ok for b in bodies)
    admit_s = time.process_time() - t0
    assert bad == 0, f"{bad} generated objects are invalid"

    t0 = time.process_time()
    objs = objects_from_documents(docs)
    load_s = time.process_time() - t0
    assert len(objs.nodepools) == n and len(objs.nodeclasses) == n

    changed = [{**b, "metadata": {**b["metadata"], "labels": {"changed": "yes"}}} for b in bodies]
    t0 = time.process_time()
    bad = sum(not crd.admit_object(c, kind=c["kind"], old=b).ok for c, b in zip(changed, bodies, strict=True))
    update_s = time.process_time() - t0
    assert bad == 0, f"{bad} generated updates are refused"

    print(f"objects: {n} NodePools + {n} EC2NodeClasses")
    print(f"CRD load + CEL compile (once per process): {compile_s:.3f} s")
    print(
        f"admit (schema, CEL, defaults, runtime checks): {admit_s:.3f} s ({admit_s / (2 * n) * 1e6:.0f} us/object)"
    )
    print(f"load (admit + pydantic models): {load_s:.3f} s ({load_s / (2 * n) * 1e6:.0f} us/object)")
    print(
        f"update (old admitted + new as its update): {update_s:.3f} s ({update_s / (2 * n) * 1e6:.0f} us/object)"
    )


if __name__ == "__main__":
    main()
