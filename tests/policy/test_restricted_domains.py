"""The ``restricted-labels`` rule: Karpenter's restricted label domains, plus the pack's
``extraRestrictedDomains``, which cover the domain itself and every subdomain (as Karpenter's own
restricted domains do: ``kubernetes.io`` covers ``node.kubernetes.io``)."""

from __future__ import annotations

from typing import Any

from nodewright.policy.labels_rules import check_restricted_labels
from nodewright.policy.resources import NODEPOOL_CR, ResourceView


def _pool(labels: dict[str, str]) -> ResourceView:
    props: dict[str, Any] = {
        "metadata": {"name": "default"},
        "spec": {"template": {"metadata": {"labels": labels}, "spec": {"requirements": []}}},
    }
    return ResourceView(type=NODEPOOL_CR, name="default", props=props)


CONFIG = {"extraRestrictedDomains": ["corp.example"]}


def test_extra_restricted_domain_itself_is_refused() -> None:
    assert check_restricted_labels(_pool({"corp.example/team": "a"}), CONFIG)


def test_extra_restricted_domains_cover_subdomains() -> None:
    assert check_restricted_labels(_pool({"billing.corp.example/team": "a"}), CONFIG)


def test_a_lookalike_domain_is_not_a_subdomain() -> None:
    assert check_restricted_labels(_pool({"notcorp.example/team": "a"}), CONFIG) == []


def test_karpenter_restricted_domain_is_refused_without_config() -> None:
    assert check_restricted_labels(_pool({"karpenter.sh/custom": "x"}), {})
    assert check_restricted_labels(_pool({"team": "a"}), {}) == []
