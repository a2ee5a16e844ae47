"""One topology group: pod counts per domain of one key (Karpenter's ``TopologyGroup``).

A group is ``SELECT COUNT(*) FROM pods GROUP BY <topology key>`` for the pods its selector and
namespaces select, plus the rule that turns those counts into the domains a pod may use:

* spread (``nextDomainTopologySpread``): ``min`` = smallest count over the domains the pod's strict
  requirements allow (``0`` for ``kubernetes.io/hostname``, and ``0`` when fewer than
  ``minDomains`` such domains exist); a node domain is valid when ``count (+1 if the pod is
  selected) - min <= maxSkew``; the valid domain with the smallest count wins. For hostname with a
  single node domain (a new NodeClaim's placeholder) the domain is valid iff ``count(+1) <= maxSkew``.
* pod affinity (``nextDomainAffinity``): non-empty domains allowed by pod and node; when none and
  the pod selects itself and no compatible domain holds a pod, bootstrap with one domain of
  ``podDomains ∩ nodeDomains`` and one of ``podDomains``.
* pod anti-affinity (``nextDomainAntiAffinity``): empty domains allowed by pod and node.

Where Go picks by map iteration order (ties in spread, the bootstrap domains), nodewright picks
the lexicographically smallest domain, so plans are deterministic.

Counts are a plain ``dict`` updated incrementally; ``empty`` is kept equal to the zero-count
domains, so anti-affinity and hostname checks are O(1) per candidate node.

Boundary: no pods lists, no cluster; :mod:`nodewright.scheduling.topology` feeds it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import IntEnum
from typing import Final

from nodewright.algebra.requirements import Requirement
from nodewright.labels import HOSTNAME
from nodewright.scheduling.topologyfilter import TopologyNodeFilter
from nodewright.scheduling.topologyselector import (
    RawSelector,
    Selector,
    selector_for_listing,
    selector_for_matching,
    selector_key,
)

MAX_INT32: Final = 2**31 - 1
_IN: Final = "In"
_EXISTS: Final = "Exists"


class TopologyType(IntEnum):
    """Kinds of topology group, in Karpenter's order (the values are part of the dedupe key)."""

    SPREAD = 0
    POD_AFFINITY = 1
    POD_ANTI_AFFINITY = 2

    def __str__(self) -> str:
        return _TYPE_NAMES[self]


_TYPE_NAMES: Final = {
    TopologyType.SPREAD: "topology spread",
    TopologyType.POD_AFFINITY: "pod affinity",
    TopologyType.POD_ANTI_AFFINITY: "pod anti-affinity",
}


def in_requirement(key: str, values: Iterable[str]) -> Requirement:
    """``key In [values]`` (``DoesNotExist`` when there are none, as Karpenter's empty options)."""
    chosen = frozenset(values)
    if not chosen:
        return does_not_exist(key)
    return Requirement.new(key, _IN, chosen)


def does_not_exist(key: str) -> Requirement:
    return Requirement.new(key, "DoesNotExist")


GroupKey = tuple[object, ...]


def group_key(
    *,
    topology_type: TopologyType,
    key: str,
    namespaces: frozenset[str],
    raw_selector: RawSelector | None,
    max_skew: int,
    node_filter: TopologyNodeFilter,
) -> GroupKey:
    """Karpenter's ``TopologyGroup.Hash()`` inputs (minDomains is not one of them)."""
    return (key, int(topology_type), namespaces, max_skew, node_filter.key(), selector_key(raw_selector))


class TopologyGroup:
    """Counts per domain for one (key, type, namespaces, selector, maxSkew, node filter)."""

    __slots__ = (
        "_dne",
        "_is_hostname",
        "_selects",
        "counts",
        "empty",
        "exists",
        "hash_key",
        "key",
        "list_selector",
        "max_skew",
        "min_domains",
        "namespaces",
        "node_filter",
        "owners",
        "selector",
        "seq",
        "type",
    )

    def __init__(
        self,
        *,
        topology_type: TopologyType,
        key: str,
        namespaces: frozenset[str],
        raw_selector: RawSelector | None,
        max_skew: int,
        min_domains: int | None,
        node_filter: TopologyNodeFilter,
        domains: Iterable[str],
        seq: int = 0,
    ) -> None:
        self.type = topology_type
        self.key = key
        self.namespaces = namespaces
        self.max_skew = max_skew
        self.min_domains = min_domains
        self.node_filter = node_filter
        self.selector: Selector = selector_for_matching(raw_selector)
        self.list_selector: Selector = selector_for_listing(raw_selector)
        self.hash_key = group_key(
            topology_type=topology_type,
            key=key,
            namespaces=namespaces,
            raw_selector=raw_selector,
            max_skew=max_skew,
            node_filter=node_filter,
        )
        self.counts: dict[str, int] = dict.fromkeys(domains, 0)
        self.empty: set[str] = set(self.counts)
        self.owners: set[str] = set()
        self.seq = seq
        self._is_hostname = key == HOSTNAME
        self._dne = does_not_exist(key)
        self.exists = Requirement.new(key, _EXISTS)  # what ``Requirements.get`` returns for a missing key
        self._selects: dict[str, bool] = {}

    def __repr__(self) -> str:
        return f"TopologyGroup({self.type!s}, key={self.key}, counts={self.counts})"

    # -- membership ------------------------------------------------------------------------------
    def selects(self, pod_key: str, namespace: str, labels: Mapping[str, str]) -> bool:
        """The pod is in the group's namespaces and matches its selector (memoised per pod)."""
        verdict = self._selects.get(pod_key)
        if verdict is None:
            verdict = namespace in self.namespaces and self.selector.matches(labels)
            self._selects[pod_key] = verdict
        return verdict

    # -- counts ----------------------------------------------------------------------------------
    def record(self, *domains: str) -> None:
        counts = self.counts
        for domain in domains:
            counts[domain] = counts.get(domain, 0) + 1
            self.empty.discard(domain)

    def register(self, *domains: str) -> None:
        counts = self.counts
        for domain in domains:
            if domain not in counts:
                counts[domain] = 0
                self.empty.add(domain)

    def unregister(self, *domains: str) -> None:
        for domain in domains:
            self.counts.pop(domain, None)
            self.empty.discard(domain)

    # -- next domains ----------------------------------------------------------------------------
    def get(self, selects: bool, pod_domains: Requirement, node_domains: Requirement) -> Requirement:
        """The domains a pod may use on a node (``DoesNotExist`` when none)."""
        if self.type is TopologyType.SPREAD:
            return self._next_spread(selects, pod_domains, node_domains)
        if self.type is TopologyType.POD_AFFINITY:
            return self._next_affinity(selects, pod_domains, node_domains)
        return self._next_anti_affinity(pod_domains, node_domains)

    def _min_count(self, pod_domains: Requirement) -> int:
        counts = self.counts
        if pod_domains.operator == _EXISTS:
            supported = len(counts)
            minimum = min(counts.values()) if counts else MAX_INT32
        else:
            supported = 0
            minimum = MAX_INT32
            for domain, count in counts.items():
                if pod_domains.has(domain):
                    supported += 1
                    if count < minimum:
                        minimum = count
        if self.min_domains is not None and supported < self.min_domains:
            minimum = 0
        return minimum

    def _next_spread(self, selects: bool, pod_domains: Requirement, node_domains: Requirement) -> Requirement:
        counts = self.counts
        add = 1 if selects else 0
        if self._is_hostname:
            node_values = node_domains.values
            if len(node_values) == 1:
                (host,) = node_values
                if counts.get(host, 0) + add <= self.max_skew:
                    return Requirement.new(self.key, _IN, [host])
                return self._dne
            minimum = 0
        else:
            minimum = self._min_count(pod_domains)
        limit = self.max_skew + minimum - add
        best: str | None = None
        best_count = MAX_INT32
        if node_domains.operator == _IN:
            candidates: Iterable[str] = (d for d in node_domains.values if d in counts)
        else:
            candidates = (d for d in counts if node_domains.has(d))
        for domain in candidates:
            count = counts[domain]
            if count <= limit and (
                count < best_count or (count == best_count and best is not None and domain < best)
            ):
                best = domain
                best_count = count
        if best is None:
            return self._dne
        return Requirement.new(self.key, _IN, [best])

    def _any_compatible_pod_domain(self, pod_domains: Requirement) -> bool:
        if pod_domains.operator == _EXISTS:
            return len(self.counts) > len(self.empty)
        return any(count > 0 and pod_domains.has(d) for d, count in self.counts.items())

    def _may_bootstrap(self, selects: bool, pod_domains: Requirement) -> bool:
        return selects and (
            len(self.counts) == len(self.empty) or not self._any_compatible_pod_domain(pod_domains)
        )

    def _next_affinity(
        self, selects: bool, pod_domains: Requirement, node_domains: Requirement
    ) -> Requirement:
        counts = self.counts
        if self._is_hostname:
            node_values = node_domains.values
            if len(node_values) == 1:
                (host,) = node_values
                if not pod_domains.has(host):
                    return self._dne
                if counts.get(host, 0) > 0 or self._may_bootstrap(selects, pod_domains):
                    return Requirement.new(self.key, _IN, [host])
                return self._dne
        if node_domains.operator == _IN:
            options = [d for d in node_domains.values if counts.get(d, 0) > 0 and pod_domains.has(d)]
        else:
            options = [
                d for d, count in counts.items() if count > 0 and pod_domains.has(d) and node_domains.has(d)
            ]
        if options:
            return in_requirement(self.key, options) if options else self._dne
        if self._may_bootstrap(selects, pod_domains):
            # Go takes the first domain of a map walk for each; nodewright the smallest.
            intersected = pod_domains.intersection(node_domains)
            first = min((d for d in counts if intersected.has(d)), default=None)
            second = min((d for d in counts if pod_domains.has(d)), default=None)
            options = [d for d in (first, second) if d is not None]
        return in_requirement(self.key, options) if options else self._dne

    def _next_anti_affinity(self, pod_domains: Requirement, node_domains: Requirement) -> Requirement:
        empty = self.empty
        if self._is_hostname:
            node_values = node_domains.values
            if len(node_values) == 1:
                (host,) = node_values
                if self.counts.get(host, 0) == 0:
                    return Requirement.new(self.key, _IN, [host])
                return self._dne
        if not empty:
            return self._dne
        if node_domains.operator == _IN and len(node_domains) < len(empty):
            options = [d for d in node_domains.values if d in empty and pod_domains.has(d)]
        else:
            options = [d for d in empty if node_domains.has(d) and pod_domains.has(d)]
        return in_requirement(self.key, options) if options else self._dne
