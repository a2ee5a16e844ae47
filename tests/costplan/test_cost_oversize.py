"""Oversized-type advice: the u7i case on the embedded ``aws:us-east-1`` catalog, the
``plan`` warning with its measured saving, the advisory policy, and fleet mode's planStrategy."""

from __future__ import annotations

import base64
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from test_sched_support import nodepool

from nodewright.api.core import Pod
from nodewright.api.karpenter import NodePool
from nodewright.catalog import load_catalog
from nodewright.cluster.state import ClusterState
from nodewright.costplan.oversize import advise, capped, oversized
from nodewright.policy.cost_rules import check_oversized_types
from nodewright.policy.resources import NODEPOOL_CR, ResourceView
from nodewright.scheduling.plan import PlanOptions, plan

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _pool() -> NodePool:
    return nodepool(requirements=[])  # unconstrained: every type of the catalog


@pytest.fixture(scope="module")
def real() -> list[Any]:
    return list(load_catalog("aws:us-east-1"))


def test_unconstrained_pool_reaches_u7i_and_a_cap_removes_it(real: list[Any]) -> None:
    advice = oversized(_pool(), real)
    assert advice is not None
    assert "u7i-12tb.224xlarge" in {t.name for t in advice.types}
    assert advice.requirement.startswith("karpenter.k8s.aws/instance-cpu Lt ")
    assert oversized(capped(_pool(), advice.cap), real) is None
    assert oversized(capped(_pool(), 65), real) is None


def test_plan_warning_states_the_measured_saving(real: list[Any]) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        bench = importlib.import_module("scheduling")
    finally:
        sys.path.remove(str(BENCH))
    state = ClusterState(pods=tuple(Pod.model_validate(p) for p in bench.generic_pods(1500)))
    pools = [_pool()]
    doc = plan(nodepools=pools, cluster=state, catalog_for=lambda _np: real)
    assert any(c.launch.instance_type.startswith("u7i") for c in doc.node_claims)
    lines = advise(
        nodepools=pools, cluster=state, catalog_for=lambda _np: real, options=PlanOptions(), doc=doc
    )
    assert len(lines) == 1
    assert "u7i-12tb.224xlarge" in lines[0] and "instance-cpu Lt" in lines[0] and "saves" in lines[0]


def test_policy_is_advisory_on_an_unconstrained_pool_only() -> None:
    body = _pool().to_k8s()
    got = check_oversized_types(ResourceView(type=NODEPOOL_CR, name="default", props=body), {})
    assert len(got) == 1 and "u7i" in got[0] and "instance-cpu Lt" in got[0]
    body = capped(_pool(), 65).to_k8s()
    assert check_oversized_types(ResourceView(type=NODEPOOL_CR, name="default", props=body), {}) == []
    from nodewright.policy.catalog import get_policy

    assert get_policy("nodepool-oversized-types").enforcement == "advisory"


def test_fleet_claims_file_must_match_the_plan_strategy(tmp_path: Path) -> None:
    from nodewright.errors import InputError
    from nodewright.scheduling.claimsfile import load_claims as read_claims
    from nodewright.stack.model import read_settings

    claims = tmp_path / "claims.yaml"
    claims.write_text(
        "apiVersion: nodewright.dev/v1alpha1\nkind: NodeClaimPlan\nmetadata: {strategy: karpenter}\nnodeClaims: []\n"
    )
    assert read_claims(claims, strategy="karpenter") == []
    with pytest.raises(InputError, match="planStrategy is 'cost'"):
        read_claims(claims, strategy="cost")
    pem = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    ca = base64.b64encode(pem).decode()
    cluster = json.dumps({"clusterName": "c", "clusterEndpoint": "https://x", "caBundle": ca})
    s = read_settings({"files": '["a.yaml"]', "cluster": cluster, "planStrategy": "cost"}, stack="t")
    assert s.plan_strategy == "cost"
    with pytest.raises(InputError, match="planStrategy"):
        read_settings({"files": '["a.yaml"]', "cluster": cluster, "planStrategy": "cheap"}, stack="t")
