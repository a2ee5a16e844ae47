"""Benchmark: the pods 2,000 workloads would create over a 20,000-pod cluster state.

``python bench/workloads.py [WORKLOADS] [PODS]``: builds WORKLOADS Deployments (20 namespaces,
selector ``app: w<i>``, 12 replicas) whose pods partly run (PODS running pods spread over them),
then times :func:`nodewright.scheduling.workloads.round_pods` (the index of active pods, the
selector matching, the missing pods built from the templates), what ``plan`` adds to every round.
Times are CPU time of this process (the machine is shared). No assertion: CI does not time anything.
"""

from __future__ import annotations

import sys
import time

from nodewright.api.core import Pod
from nodewright.api.workloads import Deployment
from nodewright.cluster.state import ClusterState
from nodewright.scheduling.workloads import round_pods


def main(workloads: int = 2000, pods: int = 20000) -> None:
    template = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "250m"}}}]}}
    deploys = tuple(
        Deployment.model_validate(
            {
                "metadata": {"name": f"w{i}", "namespace": f"ns{i % 20}"},
                "spec": {
                    "replicas": 12,
                    "selector": {"matchLabels": {"app": f"w{i}"}},
                    "template": {**template, "metadata": {"labels": {"app": f"w{i}"}}},
                },
            }
        )
        for i in range(workloads)
    )
    running = tuple(
        Pod.model_validate(
            {
                "metadata": {
                    "name": f"p{j}",
                    "namespace": f"ns{(j % workloads) % 20}",
                    "labels": {"app": f"w{j % workloads}", "tier": "x"},
                },
                "spec": {"nodeName": "n", "containers": [{"name": "c"}]},
                "status": {"phase": "Running"},
            }
        )
        for j in range(pods)
    )
    cluster = ClusterState(pods=running)
    start = time.process_time()
    gen, _ = round_pods(cluster, deploys, capacity_buffer=False)
    cpu = time.process_time() - start
    print(f"{workloads} Deployments over {pods} pods: {len(gen.pods)} pods to create, {cpu:.2f}s CPU")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
