"""Resource lists and their arithmetic, as Karpenter's ``pkg/utils/resources`` does it.

A :data:`ResourceList` maps a resource name (``cpu``, ``memory``, ``pods``,
``nvidia.com/gpu``...) to an exact amount in **milli-units** (``MilliValue``): ``cpu: 1500`` is
1.5 cores, ``memory: 1024000`` is 1Ki, ``pods: 1000`` is one pod. Lists are plain dicts for speed
and are immutable by convention: every function returns a new dict and never mutates its inputs.

Boundary: arithmetic and pod request aggregation only; no scheduling decisions.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, Protocol

from nodewright.algebra.quantity import QuantityError, format_milli, parse_quantity

__all__ = [
    "CPU",
    "EPHEMERAL_STORAGE",
    "HUGEPAGES_PREFIX",
    "MEMORY",
    "PODS",
    "ContainerLike",
    "PodResourcesLike",
    "PodSpecLike",
    "ResourceList",
    "ResourceRequirementsLike",
    "add",
    "exceeded_by",
    "fits",
    "format_resource_list",
    "is_binary_resource",
    "is_pod_level_resource",
    "is_zero",
    "max_resources",
    "min_resources",
    "parse_resource_list",
    "requests_for_pod",
    "requests_for_pods",
    "resource_list_str",
    "subtract",
]

ResourceList = dict[str, int]

CPU: Final = "cpu"
MEMORY: Final = "memory"
PODS: Final = "pods"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
_BINARY_RESOURCES: Final = frozenset({MEMORY, EPHEMERAL_STORAGE, "storage"})
HUGEPAGES_PREFIX: Final = "hugepages-"
_RESTART_ALWAYS: Final = "Always"
_ONE_POD: Final = 1000


# -- the shape requests_for_pod needs (nodewright.api.core.Pod satisfies it) ------------------
class ResourceRequirementsLike(Protocol):
    @property
    def requests(self) -> Mapping[str, str | int | float]: ...
    @property
    def limits(self) -> Mapping[str, str | int | float]: ...


class ContainerLike(Protocol):
    @property
    def resources(self) -> ResourceRequirementsLike: ...
    @property
    def restart_policy(self) -> str | None: ...


class PodSpecLike(Protocol):
    @property
    def containers(self) -> Sequence[ContainerLike]: ...
    @property
    def init_containers(self) -> Sequence[ContainerLike]: ...
    @property
    def overhead(self) -> Mapping[str, str | int | float]: ...
    @property
    def resources(self) -> ResourceRequirementsLike | None: ...


class PodResourcesLike(Protocol):
    @property
    def spec(self) -> PodSpecLike: ...


# -- parsing and printing ----------------------------------------------------------------------
def is_binary_resource(name: str) -> bool:
    """True for byte-counted resources, which Kubernetes prints with binary suffixes."""
    return name in _BINARY_RESOURCES or name.startswith(HUGEPAGES_PREFIX)


def parse_resource_list(mapping: Mapping[str, str | int | float]) -> ResourceList:
    """Parse ``{name: quantity}`` into milli-units.

    Raises :class:`~nodewright.algebra.quantity.QuantityError` for the first bad quantity, its message
    prefixed with the resource name (``cpu: invalid quantity "1.5.3": ...``).
    """
    out: ResourceList = {}
    for name, value in mapping.items():
        try:
            out[name] = parse_quantity(value).milli
        except QuantityError as err:
            raise QuantityError(err.value, err.reason, resource=name) from err
    return out


def format_resource_list(rl: Mapping[str, int]) -> dict[str, str]:
    """Canonical Kubernetes strings, keys sorted (``{"cpu": "1500m", "memory": "1Gi"}``)."""
    return {name: format_milli(rl[name], binary=is_binary_resource(name)) for name in sorted(rl)}


def resource_list_str(rl: Mapping[str, int]) -> str:
    """Karpenter's ``resources.String``: ``{}`` or compact JSON of canonical quantities."""
    if not rl:
        return "{}"
    body = ",".join(f'"{k}":"{v}"' for k, v in format_resource_list(rl).items())
    return "{" + body + "}"


# -- arithmetic --------------------------------------------------------------------------------
def add(*rls: Mapping[str, int]) -> ResourceList:
    """Karpenter ``Merge``: the per-resource sum."""
    if not rls:
        return {}
    out = dict(rls[0])
    for rl in rls[1:]:
        for name, value in rl.items():
            out[name] = out.get(name, 0) + value
    return out


def subtract(a: Mapping[str, int], b: Mapping[str, int]) -> ResourceList:
    """Karpenter ``Subtract``: ``a - b`` over the keys of ``a`` only; results may be negative."""
    return {name: value - b.get(name, 0) for name, value in a.items()}


def max_resources(*rls: Mapping[str, int]) -> ResourceList:
    """Karpenter ``MaxResources``: per-resource maximum over every key present anywhere."""
    out: ResourceList = {}
    for rl in rls:
        for name, value in rl.items():
            current = out.get(name)
            if current is None or value > current:
                out[name] = value
    return out


def min_resources(*rls: Mapping[str, int]) -> ResourceList:
    """Per-resource minimum over every key present anywhere (a missing key is not zero)."""
    out: ResourceList = {}
    for rl in rls:
        for name, value in rl.items():
            current = out.get(name)
            if current is None or value < current:
                out[name] = value
    return out


def fits(candidate: Mapping[str, int], total: Mapping[str, int]) -> bool:
    """Karpenter ``Fits``: does ``candidate`` fit in ``total``?

    False when any quantity of ``total`` is negative; otherwise every ``candidate[r] <=
    total[r]``, a resource missing from ``total`` counting as 0 (so zero requests always fit and
    a non-zero request of an unknown resource never does).
    """
    for value in total.values():
        if value < 0:
            return False
    for name, value in candidate.items():  # noqa: SIM110 - a plain loop is faster on this hot path
        if value > total.get(name, 0):
            return False
    return True


def exceeded_by(limits: Mapping[str, int], usage: Mapping[str, int]) -> list[str]:
    """Resources of ``limits`` that ``usage`` exceeds, sorted (empty: within limits).

    A resource the limits do not mention is unlimited, as for a NodePool's ``spec.limits``.
    """
    return sorted(name for name, limit in limits.items() if usage.get(name, 0) > limit)


def is_zero(rl: Mapping[str, int]) -> bool:
    """True when every quantity is zero (an empty list is zero)."""
    return all(v == 0 for v in rl.values())


# -- pod requests ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=8192)
def _parsed_items(items: tuple[tuple[str, str | int | float], ...]) -> ResourceList:
    # workloads repeat a few request shapes: parse each once (callers get a copy)
    return parse_resource_list(dict(items))


def _container_requests(container: ContainerLike) -> ResourceList:
    """Requests, with limits standing in for requests that are absent (API defaulting)."""
    res = container.resources
    merged: dict[str, str | int | float] = dict(res.limits)
    merged.update(res.requests)
    return dict(_parsed_items(tuple(merged.items())))


def is_pod_level_resource(name: str) -> bool:
    """Resources a pod-level ``spec.resources`` may set (k8s component-helpers v0.35
    ``IsSupportedPodLevelResource``): cpu, memory and hugepages."""
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def _pod_level_requests(spec: PodSpecLike, containers: ResourceList) -> ResourceList:
    """The pod-level requests of supported resources, with the API server's defaulting: a
    resource with a pod-level limit and no pod-level request gets the limit as its request when no
    container requests it (otherwise the containers' aggregate stands)."""
    res = spec.resources
    if res is None:
        return {}
    out = {k: v for k, v in parse_resource_list(res.requests).items() if is_pod_level_resource(k)}
    for k, v in parse_resource_list(res.limits).items():
        # hugepages cannot be overcommitted: their pod-level request always defaults to the limit
        overcommit = not k.startswith(HUGEPAGES_PREFIX)
        if is_pod_level_resource(k) and k not in out and not (overcommit and k in containers):
            out[k] = v
    return out


_POD_REQUESTS: dict[tuple[object, ...], ResourceList] = {}
_POD_REQUESTS_MAX: Final = 16384


def _resources_key(res: ResourceRequirementsLike | None) -> tuple[object, ...] | None:
    return None if res is None else (tuple(res.requests.items()), tuple(res.limits.items()))


def requests_for_pod(pod: PodResourcesLike) -> ResourceList:
    """:func:`pod_requests`, memoised on the pod's resource fields (workloads repeat a few shapes;
    the memo is bounded and the caller gets its own copy)."""
    spec = pod.spec
    key = (
        tuple((_resources_key(c.resources), c.restart_policy) for c in spec.containers),
        tuple((_resources_key(c.resources), c.restart_policy) for c in spec.init_containers),
        tuple(spec.overhead.items()) if spec.overhead else (),
        _resources_key(spec.resources),
    )
    got = _POD_REQUESTS.get(key)
    if got is None:
        got = pod_requests(pod)
        if len(_POD_REQUESTS) >= _POD_REQUESTS_MAX:
            _POD_REQUESTS.clear()
        _POD_REQUESTS[key] = got
    return dict(got)


def pod_requests(pod: PodResourcesLike) -> ResourceList:
    """Kubernetes ``PodRequests`` as Karpenter computes it, plus ``pods: 1000`` (one pod).

    ``max(sum(containers) + sidecars, max over init containers of (init + sidecars started
    before it))``, where sidecars are init containers with ``restartPolicy: Always`` (they keep
    running, so they add to the containers and to every later init container); then pod-level
    ``spec.resources.requests`` replace that aggregate for cpu, memory and hugepages (Kubernetes
    1.34+ default; Karpenter ``resources.Ceiling`` through component-helpers ``PodRequests``);
    then pod overhead is added.
    """
    spec = pod.spec
    requests = add(*(_container_requests(c) for c in spec.containers))
    sidecars: ResourceList = {}
    max_init: ResourceList = {}
    for container in spec.init_containers:
        reqs = _container_requests(container)
        if container.restart_policy == _RESTART_ALWAYS:
            requests = add(requests, reqs)
            sidecars = add(sidecars, reqs)
            max_init = max_resources(max_init, sidecars)
        else:
            max_init = max_resources(max_init, add(reqs, sidecars))
    requests = max_resources(requests, max_init)
    if spec.resources is not None:
        requests.update(_pod_level_requests(spec, requests))
    if spec.overhead:
        requests = add(requests, parse_resource_list(spec.overhead))
    requests[PODS] = _ONE_POD
    return requests


def requests_for_pods(pods: Iterable[PodResourcesLike]) -> ResourceList:
    """Karpenter ``RequestsForPods``: the sum of the pods' requests, ``pods`` = their count."""
    return add({PODS: 0}, *(requests_for_pod(p) for p in pods))
