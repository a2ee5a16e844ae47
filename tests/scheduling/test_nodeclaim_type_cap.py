"""A NodeClaim offers at most 600 instance types, the cheapest first: Karpenter v1.14.1's
production value of ``MaxInstanceTypes`` (``pkg/controllers/provisioning/scheduling/
nodeclaimtemplate.go``; its suite_test lowers it to 60, which the ported suites pass explicitly)."""

from __future__ import annotations

from test_sched_support import nodepool, pod

from nodewright.catalog import fake_instance_types
from nodewright.cluster.state import ClusterState
from nodewright.scheduling.plan import MAX_INSTANCE_TYPES, PlanOptions, plan


def test_max_instance_types_is_karpenters_600() -> None:
    assert MAX_INSTANCE_TYPES == PlanOptions().max_instance_types == 600


def test_a_nodeclaim_lists_the_600_cheapest_of_more_compatible_types() -> None:
    types = fake_instance_types(700)
    doc = plan(
        nodepools=[nodepool(requirements=[])],
        cluster=ClusterState(pods=(pod("p", requests={"cpu": "100m"}),)),
        catalog_for=lambda _np: types,
    )
    (claim,) = doc.node_claims
    assert len(claim.instance_types) == 600
