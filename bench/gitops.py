"""Benchmark: the GitOps loop's hot paths.

Usage: ``.venv/bin/python bench/gitops.py``. Prints one line per measurement and a JSON summary:

* ``cluster snapshot`` against a loopback API server (tests/cluster/apiserver_harness.py) serving
  the example state scaled to N pods, paged 500 at a time;
* the PR comment (``render_markdown``) of the 100-NodePool document of tests/preview/test_pr_comment.py,
  without and with a base (grouping, findings, resource diff), and its size;
* the rollout computation (``drift.rollout``) for 10,000 pools with scheduled budgets.
"""

from __future__ import annotations

import copy
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "cluster"), str(ROOT / "tests" / "pulumi")]


def _snapshot(pods: int) -> tuple[float, int]:
    import tempfile

    from apiserver_harness import KIND_PATH, Recorded, kubeconfig_for, serve

    from nodewright.cluster.live import snapshot

    with serve() as url, tempfile.TemporaryDirectory() as tmp:
        template = Recorded.lists[KIND_PATH["Pod"]][0]
        Recorded.lists[KIND_PATH["Pod"]] = [
            {**template, "metadata": {**template["metadata"], "name": f"p{i}", "uid": f"u{i}"}}
            for i in range(pods)
        ]
        from kubernetes import client, config

        config.load_kube_config(config_file=str(kubeconfig_for(url, Path(tmp))))
        t0 = time.perf_counter()
        doc = snapshot(api_factory=client.ApiClient, page_size=500)
        return time.perf_counter() - t0, len(doc["items"])


def main() -> None:
    out: dict[str, float] = {}
    for pods in (1_000, 10_000):
        seconds, items = _snapshot(pods)
        out[f"snapshot_{pods}_pods_s"] = round(seconds, 3)
        print(f"cluster snapshot, {pods} pods ({items} items, pages of 500): {seconds:.2f} s")

    from test_pr_comment import _hundred_pools

    from nodewright.preview.comment import render_markdown

    doc = _hundred_pools()
    base = copy.deepcopy(doc)
    for u in base["userData"]:
        u["content"] = u["content"].replace("clusterDNS", "clusterDns")
    t0 = time.perf_counter()
    md = render_markdown(doc)
    t1 = time.perf_counter()
    md_base = render_markdown(doc, base=base)
    t2 = time.perf_counter()
    out.update(
        comment_100_pools_s=round(t1 - t0, 3),
        comment_100_pools_with_base_s=round(t2 - t1, 3),
        comment_100_pools_chars=len(md_base),
    )
    print(f"PR comment, 100 NodePools / 1,050 launch templates: {t1 - t0:.2f} s ({len(md)} chars)")
    print(f"  with --base (resource diff + user-data diff): {t2 - t1:.2f} s ({len(md_base)} chars)")

    from nodewright.drift.rollout import rollout

    budgets = [
        {"nodes": "10%"},
        {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h", "reasons": ["Drifted"]},
    ]
    at = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)
    t0 = time.perf_counter()
    for i in range(10_000):
        rollout(budgets, drifted=i % 50, nodes=100, at=at)
    t1 = time.perf_counter()
    out["rollout_us"] = round((t1 - t0) / 10_000 * 1e6, 1)
    print(f"rollout with a scheduled budget: {out['rollout_us']} µs per pool")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
