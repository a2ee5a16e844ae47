"""Per-pod data computed once and reused by every placement attempt (Karpenter ``PodData``).

Requests (``RequestsForPods``: containers, init containers, sidecars, overhead, ``pods: 1``) as a
resource list and a vector, requirements (node selector + first required term + heaviest
preferred term as required), strict requirements (without preferences) for topology, host
ports, the queue sort key, and a per-template toleration memo. ``refresh`` recomputes the parts a
relaxation can change.
"""

from __future__ import annotations

from nodewright.algebra.requirements import Requirements
from nodewright.algebra.resources import CPU, MEMORY, ResourceList, requests_for_pod
from nodewright.api.core import Pod
from nodewright.scheduling.hostports import HostPort, host_ports
from nodewright.scheduling.instancetypes import ResourceSpace
from nodewright.scheduling.podrequirements import pod_requirements


def has_preferred_node_affinity(pod: Pod) -> bool:
    aff = pod.spec.affinity
    return bool(
        aff is not None
        and aff.node_affinity is not None
        and aff.node_affinity.preferred_during_scheduling_ignored_during_execution
    )


def claims_volumes(pod: Pod) -> bool:
    return any(v.persistent_volume_claim is not None or v.ephemeral is not None for v in pod.spec.volumes)


# equal twin keys share one class object, so twins are told apart by identity (bounded: on a miss
# the field comparison decides, alike)
_TWIN_CLASSES: dict[tuple[object, ...], object] = {}
_TWIN_CLASSES_MAX = 1 << 16


class PodData:
    """Everything the solve loop needs about one pod, cached."""

    __slots__ = (
        "_ignore",
        "current",
        "key",
        "pod",
        "ports",
        "requests",
        "requirements",
        "sort_key",
        "strict",
        "tolerates",
        "topo_sig",
        "twin",
        "vec",
        "volume_requirements",
    )

    def __init__(
        self,
        pod: Pod,
        *,
        space: ResourceSpace,
        ignore_preferences: bool = False,
        requests: ResourceList | None = None,
        volume_requirements: list[Requirements] | None = None,
    ) -> None:
        self.key: str = pod.key
        self.pod: Pod = pod
        self.requests: ResourceList = requests if requests is not None else requests_for_pod(pod)
        self.vec: tuple[int, ...] = space.vec(self.requests)
        self.ports: tuple[HostPort, ...] = host_ports(pod)
        self.volume_requirements: list[Requirements] = volume_requirements or []
        meta = pod.metadata
        self.sort_key: tuple[int, int, str, str, str] = (
            -self.requests.get(CPU, 0),
            -self.requests.get(MEMORY, 0),
            meta.creation_timestamp or "",
            meta.uid or "",
            self.key,
        )
        self._ignore = ignore_preferences
        self.current: Pod = pod
        self.requirements: Requirements = Requirements()
        self.strict: Requirements = Requirements()
        self.tolerates: dict[int, str | None] = {}
        self.topo_sig: str | None = None
        # the pod's twin class (see twin_class): None until asked, and after a relaxation (the
        # class is of ``current``)
        self.twin: object | None = None
        self.refresh(pod)

    def fresh(self) -> PodData:
        """A copy for another solve (a solve relaxes and memoises on the pods it places); this
        one must not have been solved."""
        out = PodData.__new__(PodData)
        out.key, out.pod, out.requests, out.vec = self.key, self.pod, self.requests, self.vec
        out.ports, out.volume_requirements, out.sort_key = self.ports, self.volume_requirements, self.sort_key
        out._ignore, out.current, out.requirements, out.strict = (
            self._ignore,
            self.pod,
            self.requirements,
            self.strict,
        )
        out.tolerates = {}
        out.topo_sig = None
        out.twin = self.twin if self.twin is not None else self.twin_class()
        return out

    def refresh(self, pod: Pod) -> None:
        """Recompute from ``pod`` (the original or a relaxed copy)."""
        self.current = pod
        self.requirements = pod_requirements(pod, include_preferred=not self._ignore)
        self.strict = (
            pod_requirements(pod, include_preferred=False)
            if has_preferred_node_affinity(pod)
            else self.requirements
        )
        self.tolerates = {}
        self.topo_sig = None
        self.twin = None

    def twin_class(self) -> object:
        """The pod's twin class (scheduling.twins): two pods with the same class object ask alike
        (requests, requirements, tolerations; neither has host ports or volumes). Kept until a
        relaxation changes ``current``."""
        got = self.twin
        if got is not None:
            return got
        if self.ports or self.volume_requirements or claims_volumes(self.pod):
            got = object()  # a twin of no other pod
        else:
            key = (
                frozenset(self.requests.items()),
                self.requirements.frozen(),
                tuple(self.current.spec.tolerations),
            )
            got = _TWIN_CLASSES.get(key)
            if got is None:
                if len(_TWIN_CLASSES) >= _TWIN_CLASSES_MAX:
                    _TWIN_CLASSES.clear()
                got = _TWIN_CLASSES[key] = key
        self.twin = got
        return got

    def topology_signature(self) -> str:
        """What hostname-keyed topology decisions depend on: namespace, labels, spread and pod
        (anti-)affinity. Pods with equal signatures are rejected by the same hostnames."""
        if self.topo_sig is None:
            pod = self.current
            aff = pod.spec.affinity
            parts = [
                pod.metadata.namespace or "default",
                repr(sorted(pod.metadata.labels.items())),
                repr([t.model_dump() for t in pod.spec.topology_spread_constraints]),
                repr(
                    aff.pod_affinity.model_dump()
                    if aff is not None and aff.pod_affinity is not None
                    else None
                ),
                repr(
                    aff.pod_anti_affinity.model_dump()
                    if aff is not None and aff.pod_anti_affinity is not None
                    else None
                ),
            ]
            self.topo_sig = sig = "\x00".join(parts)
            return sig
        return self.topo_sig

    def reset(self) -> None:
        self.refresh(self.pod)
