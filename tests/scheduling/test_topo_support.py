"""Helpers for the topology unit tests: pod/node/requirement builders and a NodePool stand-in
(:class:`Pool`) that yields :class:`DomainSource` values for :class:`Topology` directly.

The upstream scenarios run through the product instead (``plan``): see ``test_topo_plan_support``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import builders

from nodewright.algebra.requirements import (
    Requirement,
    Requirements,
)
from nodewright.api.core import Node, Pod, Taint
from nodewright.labels import CAPACITY_TYPE, HOSTNAME, NODEPOOL, ZONE
from nodewright.scheduling.topology import DomainSource

ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")


def test_support_module_loads() -> None:
    assert ZONES


# -- builders ----------------------------------------------------------------------------------
def pod(
    name: str,
    *,
    namespace: str = "default",
    labels: Mapping[str, str] | None = None,
    node_selector: Mapping[str, str] | None = None,
    tsc: Sequence[Mapping[str, Any]] = (),
    affinity: Mapping[str, Any] | None = None,
    tolerations: Sequence[Mapping[str, Any]] = (),
    node_name: str | None = None,
    phase: str | None = None,
    deleting: bool = False,
) -> Pod:
    """:func:`builders.pod` as a model, not marked unschedulable (topology reads no pod status but
    the phase)."""
    return Pod.model_validate(
        builders.pod(
            name,
            namespace=namespace,
            labels=labels or {},
            node_selector=node_selector,
            tsc=tsc,
            affinity=affinity,
            tolerations=tolerations,
            node_name=node_name,
            phase=phase,
            deleting=deleting,
            pending=False,
            created=None,
        )
    )


def spread(
    key: str,
    *,
    max_skew: int = 1,
    labels: Mapping[str, str] | None = None,
    selector: Mapping[str, Any] | None = None,
    nil_selector: bool = False,
    when: str = "DoNotSchedule",
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {"topologyKey": key, "maxSkew": max_skew, "whenUnsatisfiable": when, **extra}
    if not nil_selector:
        out["labelSelector"] = dict(selector) if selector is not None else {"matchLabels": dict(labels or {})}
    return out


def term(key: str, labels: Mapping[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"topologyKey": key, **extra}
    if labels is not None:
        out["labelSelector"] = {"matchLabels": dict(labels)}
    return out


def node(name: str, labels: Mapping[str, str], *, taints: Sequence[Mapping[str, Any]] = ()) -> Node:
    """:func:`builders.node` labelled with exactly ``labels`` (no hostname label added)."""
    return Node.model_validate(builders.node(name, labels=labels, taints=taints, hostname_label=False))


def reqs(**values: Sequence[str]) -> Requirements:
    """``reqs(zone=[...])`` style builder; keys are mapped through ``KEYS``."""
    return Requirements(Requirement.new(KEYS.get(k, k), "In", v) for k, v in values.items())


KEYS = {"zone": ZONE, "ct": CAPACITY_TYPE, "host": HOSTNAME}


@dataclass
class Pool:
    """A NodePool for the mini solver: requirements, taints, node cap, pods per node."""

    name: str = "default"
    requirements: Requirements = field(
        default_factory=lambda: Requirements([Requirement.new(CAPACITY_TYPE, "Exists")])
    )
    taints: tuple[Taint, ...] = ()
    max_nodes: int | None = None
    pods_per_node: int = 1000
    instance_types: Sequence[Requirements] = ()

    def source(self) -> DomainSource:
        its = self.instance_types or [
            Requirements(
                [
                    Requirement.new(ZONE, "In", ZONES),
                    Requirement.new(CAPACITY_TYPE, "In", ("spot", "on-demand")),
                ]
            )
        ]
        return DomainSource(
            nodepool_requirements=self.requirements, taints=self.taints, instance_type_requirements=its
        )

    def template(self) -> Requirements:
        out = self.requirements.copy()
        out.add(Requirement.new(NODEPOOL, "In", (self.name,)))
        return out
