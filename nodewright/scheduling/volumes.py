"""Volumes where the cluster state has them: CSI volume limits and volume topology.

Volume limits (Karpenter ``scheduling/volumeusage.go``) apply to existing nodes: per CSI driver
the CSINode's ``allocatable.count``; a PVC is counted once per node; exceeding it reads ``would
exceed volume limit``. Volume topology (``volumetopology.go``): a bound PV's node affinity terms
(hostname dropped for local/hostPath volumes), or for an unbound claim its StorageClass's
``allowedTopologies``, become alternative requirement sets added to the NodeClaim only.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from nodewright import labels
from nodewright.algebra.requirements import Requirement, Requirements
from nodewright.api.core import CSINode, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass

EXCEEDS: str = "would exceed volume limit"


@dataclass(kw_only=True)
class VolumeIndex:
    """PVCs, PVs, StorageClasses and CSINodes of the cluster state, by name."""

    pvcs: Mapping[str, PersistentVolumeClaim] = field(default_factory=dict)
    pvs: Mapping[str, PersistentVolume] = field(default_factory=dict)
    classes: Mapping[str, StorageClass] = field(default_factory=dict)
    csinodes: Mapping[str, CSINode] = field(default_factory=dict)

    @staticmethod
    def build(
        pvcs: Sequence[PersistentVolumeClaim],
        pvs: Sequence[PersistentVolume],
        classes: Sequence[StorageClass],
        csinodes: Sequence[CSINode],
    ) -> VolumeIndex:
        return VolumeIndex(
            pvcs={f"{c.metadata.namespace or 'default'}/{c.metadata.name}": c for c in pvcs},
            pvs={v.metadata.name: v for v in pvs},
            classes={s.metadata.name: s for s in classes},
            csinodes={n.metadata.name: n for n in csinodes},
        )

    def claims(self, pod: Pod) -> list[tuple[str, PersistentVolumeClaim | None]]:
        ns = pod.metadata.namespace or "default"
        out: list[tuple[str, PersistentVolumeClaim | None]] = []
        for v in pod.spec.volumes:
            if v.persistent_volume_claim is not None:
                key = f"{ns}/{v.persistent_volume_claim.claim_name}"
            elif v.ephemeral is not None:
                key = f"{ns}/{pod.metadata.name}-{v.name}"
            else:
                continue
            out.append((key, self.pvcs.get(key)))
        return out

    def driver(self, pvc: PersistentVolumeClaim | None) -> str | None:
        if pvc is None:
            return None
        if pvc.spec.volume_name:
            pv = self.pvs.get(pvc.spec.volume_name)
            if pv is not None and pv.spec.csi is not None:
                return pv.spec.csi.driver
        sc = self.classes.get(pvc.spec.storage_class_name or "")
        return sc.provisioner if sc is not None else None

    def pod_volumes(self, pod: Pod) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for key, pvc in self.claims(pod):
            drv = self.driver(pvc)
            if drv:
                out.setdefault(drv, set()).add(key)
        return out

    def limits(self, node_name: str) -> dict[str, int]:
        node = self.csinodes.get(node_name)
        if node is None:
            return {}
        return {
            d.name: d.allocatable.count
            for d in node.spec.drivers
            if d.allocatable is not None and d.allocatable.count is not None
        }

    def topology(self, pod: Pod) -> list[Requirements]:
        """Alternative requirement sets from the pod's volumes (empty: unconstrained)."""
        per_volume: list[list[Requirements]] = []
        for _, pvc in self.claims(pod):
            if pvc is None:
                continue
            alts: list[Requirements] = []
            pv = self.pvs.get(pvc.spec.volume_name or "") if pvc.spec.volume_name else None
            if pv is not None:
                req = pv.spec.node_affinity.required if pv.spec.node_affinity is not None else None
                local = pv.spec.local is not None or pv.spec.host_path is not None
                for term in req.node_selector_terms if req is not None else []:
                    exprs = [e for e in term.match_expressions if not (local and e.key == labels.HOSTNAME)]
                    if exprs:
                        alts.append(Requirements.from_node_selector_requirements(exprs))
            else:
                sc = self.classes.get(pvc.spec.storage_class_name or "")
                if sc is not None:
                    for t in sc.allowed_topologies:
                        alts.append(
                            Requirements(
                                Requirement.new(e.key, "In", e.values) for e in t.match_label_expressions
                            )
                        )
            if alts:
                per_volume.append(alts)
        if not per_volume:
            return []
        out: list[Requirements] = []
        for combo in itertools.product(*per_volume):
            merged = Requirements()
            ok = True
            for r in combo:
                if merged.compatible(r) is not None and len(merged):
                    ok = False
                    break
                merged.add_all(r)
            if ok:
                out.append(merged)
        return out


class VolumeUsage:
    """Volumes (PVC keys) per CSI driver on one node, against the CSINode limits."""

    def __init__(self, index: VolumeIndex | None, node_name: str, pods: Sequence[Pod]) -> None:
        self._index = index
        self._limits = index.limits(node_name) if index is not None else {}
        self._used: dict[str, set[str]] = {}
        if index is not None:
            for p in pods:
                for drv, keys in index.pod_volumes(p).items():
                    self._used.setdefault(drv, set()).update(keys)

    def exceeds_limits(self, pod: Pod) -> str | None:
        if not self._limits or self._index is None:
            return None
        for drv, keys in self._index.pod_volumes(pod).items():
            limit = self._limits.get(drv)
            if limit is not None and len(self._used.get(drv, set()) | keys) > limit:
                return EXCEEDS
        return None

    def add(self, pod: Pod) -> None:
        if self._index is None or not pod.spec.volumes:
            return
        for drv, keys in self._index.pod_volumes(pod).items():
            self._used.setdefault(drv, set()).update(keys)
