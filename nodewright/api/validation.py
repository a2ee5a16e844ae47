"""Semantic checks nodewright keeps beside the CRDs: cluster-state Pods, and the typo hint.

Karpenter's own objects (NodePool, NodeClaim, EC2NodeClass) are validated by their shipped CRDs
and Karpenter's runtime checks in :mod:`nodewright.crd` (the hand-written NodePool/EC2NodeClass
rules that lived here are gone: the CRD schema and CEL rules cover them). What stays: a Pod's
quantities (cluster state, where the API server already validated the pod; a malformed file
should still be a clear error) and :func:`hint`, the typo suggestion used across loaders.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from nodewright.algebra.quantity import is_quantity
from nodewright.api.core import Pod, PodSpec
from nodewright.errors import Collector, typo_hint


def hint(value: str, choices: Iterable[str]) -> str:
    """`` (typo of "X"?)`` when ``value`` is close to one of ``choices``, else ``""``."""
    return typo_hint(value, choices)


def check_quantity(c: Collector, path: str, value: Any) -> None:
    from nodewright.algebra.quantity import parse_quantity

    try:
        parse_quantity(value)
    except (ValueError, TypeError) as exc:
        c.add(path, str(exc))


def check_pod_shape(pod: Pod, c: Collector) -> None:
    """Shape checks for a cluster-state Pod (semantic pod validation is the scheduler's)."""
    if not pod.metadata.name:
        c.add(pod.origin_path("metadata.name"), "a Pod needs metadata.name")
    _check_pod_spec(pod, c)


class PodShapes:
    """:func:`check_pod_shape` over the pods of one input: a ``spec`` object found clean is not
    checked again (the pods of a workload share one validated spec, :mod:`nodewright.api.pods`);
    it is held, so its id is not reused."""

    def __init__(self) -> None:
        self._clean: dict[int, PodSpec] = {}

    def __call__(self, pod: Pod, c: Collector) -> None:
        if not pod.metadata.name:
            c.add(pod.origin_path("metadata.name"), "a Pod needs metadata.name")
        spec = pod.spec
        if self._clean.get(id(spec)) is spec:
            return
        found = len(c.problems)
        _check_pod_spec(pod, c)
        if len(c.problems) == found:
            self._clean[id(spec)] = spec


def _check_pod_spec(pod: Pod, c: Collector) -> None:
    """The quantities of ``pod.spec`` (a function of the spec alone, but for the paths it names)."""
    at = pod.origin_path
    for group, containers in (
        ("containers", pod.spec.containers),
        ("initContainers", pod.spec.init_containers),
    ):
        for i, ctr in enumerate(containers):
            for part, mapping in (("requests", ctr.resources.requests), ("limits", ctr.resources.limits)):
                for key, value in sorted(mapping.items()):
                    if not is_quantity(value):  # the path is built only for a bad value
                        check_quantity(c, at(f"spec.{group}[{i}].resources.{part}.{key}"), value)
    for key, value in sorted(pod.spec.overhead.items()):
        check_quantity(c, at(f"spec.overhead.{key}"), value)


def check_mapping_quantities(c: Collector, path: str, mapping: Mapping[str, Any]) -> None:
    for key, value in sorted(mapping.items()):
        check_quantity(c, f"{path}.{key}", value)
