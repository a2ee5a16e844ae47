"""The universe of topology domains the NodePools can create (Karpenter's ``buildDomainGroups``).

For every NodePool and each of its instance types, ``requirements = NodePool requirements ∪
template labels ∪ instance-type requirements`` (same-key requirements intersect); every value of
every key is a domain of that key, remembered with the NodePool's taints so that a group whose
``nodeTaintsPolicy`` is not ``Ignore`` only sees the domains of NodePools its pod tolerates. Every
``In`` value of the NodePool requirements/labels is a domain too. A domain reachable through an
untainted NodePool is open to every pod (Karpenter's ``TopologyDomainGroup.Insert`` shortcut).

Values are Karpenter's raw ``Requirement.Values()``: for ``NotIn``/``Exists`` requirements these
are the *excluded* values, which upstream inserts as domains as well (kept on purpose).

Boundary: built once per scheduling round; read by topology groups at creation. No counts here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nodewright.algebra.requirements import Requirements
from nodewright.algebra.taints import TaintLike, is_tolerated

if TYPE_CHECKING:
    from nodewright.api.core import Toleration
    from nodewright.api.karpenter import NodePool


@dataclass(frozen=True, kw_only=True)
class DomainSource:
    """One NodePool as the domain universe sees it.

    ``nodepool_requirements`` is exactly ``spec.template.spec.requirements`` (with minValues) plus the
    template labels as ``In`` requirements; not the ``karpenter.sh/nodepool`` label. The instance
    types are every type the catalog offers the NodePool, not pre-filtered (as upstream).
    """

    nodepool_requirements: Requirements
    taints: tuple[TaintLike, ...] = ()
    instance_type_requirements: Sequence[Requirements] = ()

    @staticmethod
    def from_nodepool(nodepool: NodePool, instance_type_requirements: Sequence[Requirements]) -> DomainSource:
        """Build the source of one NodePool from its model and its instance types' requirements."""
        template = nodepool.spec.template
        requirements = Requirements.from_node_selector_requirements(template.spec.requirements)
        requirements.add(*Requirements.from_labels(template.metadata.labels).values())
        return DomainSource(
            nodepool_requirements=requirements,
            taints=tuple(template.spec.taints),
            instance_type_requirements=instance_type_requirements,
        )


@dataclass
class _Domain:
    """Taint sets of the NodePools that can create a domain; ``()`` first means open to all pods."""

    taint_sets: list[tuple[TaintLike, ...]] = field(default_factory=list)

    def insert(self, taints: tuple[TaintLike, ...]) -> None:
        if not self.taint_sets or not taints:
            self.taint_sets = [taints]
        elif self.taint_sets[0]:
            self.taint_sets.append(taints)

    @property
    def untainted(self) -> bool:
        return not self.taint_sets[0]


def _sequence(source: DomainSource) -> list[tuple[str, list[str]]]:
    """The (key, values) a source inserts, in order, each value of a key once."""
    out: list[tuple[str, list[str]]] = []
    seen: set[tuple[str, str]] = set()

    def emit(key: str, values: Iterable[str]) -> None:
        fresh = [v for v in values if (key, v) not in seen]
        if fresh:
            seen.update((key, v) for v in fresh)
            out.append((key, fresh))

    base = source.nodepool_requirements
    for it_requirements in source.instance_type_requirements:
        requirements = base.copy()
        requirements.add(*it_requirements.values())
        for requirement in requirements.values():
            emit(requirement.key, requirement.values)
    for requirement in base.values():
        if requirement.operator == "In":
            emit(requirement.key, requirement.values)
    return out


class DomainUniverse:
    """Domains per topology key, each with the taint sets of the NodePools that offer it."""

    def __init__(self, sources: Iterable[DomainSource] = ()) -> None:
        self._domains_built: dict[str, dict[str, _Domain]] = {}
        self._sequences: dict[tuple[object, ...], list[tuple[str, list[str]]]] = {}
        # the domains are made when first asked about (a forecast whose pods ask nothing of
        # topology never asks: a tenth of its first reconcile at 100 NodePools)
        self._pending: list[DomainSource] | None = list(sources)

    @property
    def _domains(self) -> dict[str, dict[str, _Domain]]:
        pending = self._pending
        if pending is not None:
            self._pending = None
            for source in pending:
                self._add_source(source)
        return self._domains_built

    def _insert(self, key: str, values: Iterable[str], taints: tuple[TaintLike, ...]) -> None:
        domains = self._domains_built.setdefault(key, {})
        for value in values:
            entry = domains.get(value)
            if entry is None:
                domains[value] = _Domain([taints])
            else:
                entry.insert(taints)

    def _add_source(self, source: DomainSource) -> None:
        # NodePools alike but for their name (same requirements, taints and instance types) insert
        # the same values: the sequence is derived once. Within it, a value already inserted for
        # its key is left out (inserting it again with the same taints changes no answer)
        memo_key = (
            tuple(source.nodepool_requirements.values()),
            tuple(map(id, source.taints)),
            tuple(map(id, source.instance_type_requirements)),
        )
        sequence = self._sequences.get(memo_key)
        if sequence is None:
            sequence = self._sequences[memo_key] = _sequence(source)
        taints = source.taints
        for key, values in sequence:
            self._insert(key, values, taints)

    def keys(self) -> Iterator[str]:
        return iter(self._domains)

    def domains(self, key: str) -> Mapping[str, object]:
        """Every domain of ``key`` (values are opaque), for tests and diagnostics."""
        return self._domains.get(key, {})

    def eligible(self, key: str, *, tolerations: Sequence[Toleration], honor_taints: bool) -> list[str]:
        """Domains of ``key`` a group starts with (``ForEachDomain``).

        With ``honor_taints`` only domains of a NodePool whose taints the pod tolerates; Karpenter
        applies this for every policy but ``Ignore`` (so also for (anti-)affinity groups, whose
        policy is empty).
        """
        domains = self._domains.get(key)
        if not domains:
            return []
        if not honor_taints:
            return list(domains)
        verdicts: dict[tuple[TaintLike, ...], bool] = {}
        result: list[str] = []
        for value, entry in domains.items():
            if entry.untainted:
                result.append(value)
                continue
            for taints in entry.taint_sets:
                ok = verdicts.get(taints)
                if ok is None:
                    ok = is_tolerated(taints, tolerations)
                    verdicts[taints] = ok
                if ok:
                    result.append(value)
                    break
        return result
