"""Volumes where the cluster state has them: CSI volume limits and volume topology.

Volume limits (Karpenter ``scheduling/volumeusage.go``) apply to existing nodes: per CSI driver
the CSINode's ``allocatable.count``; a PVC is counted once per node; exceeding it reads ``would
exceed volume limit``. Volume topology (``volumetopology.go``): a bound PV's node affinity terms
(hostname dropped for local/hostPath volumes), or for an unbound claim its StorageClass's
``allowedTopologies``, become alternative requirement sets added to the NodeClaim only. Claim
validation (``ValidatePersistentVolumeClaims``): missing, deleting, lost or unbound-Immediate
claims, missing or deleting volumes and missing StorageClasses, with Karpenter's texts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from nodewright import labels
from nodewright.algebra.requirements import Requirement, Requirements
from nodewright.api.core import CSINode, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass

EXCEEDS: str = "would exceed volume limit"
BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
IMMEDIATE: Final = "Immediate"
IS_DEFAULT_CLASS: Final = "storageclass.kubernetes.io/is-default-class"


class VolumeTopologyError(ValueError):
    """A claim, volume or StorageClass the pod's volume topology needs is missing (Karpenter logs it
    and leaves the pod out of the round; only the pods of deleting nodes, which are not validated,
    can get here)."""


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
        default = default_storage_class(classes)
        if default is not None:
            pvcs = [
                c
                if c.spec.storage_class_name is not None
                else c.model_copy(update={"spec": c.spec.model_copy(update={"storage_class_name": default})})
                for c in pvcs
            ]
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
        """Alternative requirement sets from the pod's volumes (empty: unconstrained).

        Karpenter ``VolumeTopology.GetRequirements``: per volume, each PV node-selector term or
        StorageClass ``allowedTopologies`` term is one alternative; volumes are folded one by one,
        keeping the combinations whose requirements intersect. When no combination of a volume
        with the ones before it intersects, every combination is kept merged (as upstream): such
        an alternative holds an empty value set, so no NodeClaim is compatible and the pod fails
        with ``incompatible volume requirements``.
        """
        alternatives: list[Requirements | None] = [None]
        for key, pvc in self.claims(pod):
            if pvc is None:
                name = key.split("/", 1)[1]
                raise VolumeTopologyError(
                    "discovering persistent volume claim, getting persistent volume claim, "
                    f'persistentvolumeclaims "{name}" not found (PersistentVolumeClaim={name})'
                )
            alts = self._claim_alternatives(pvc)
            if not alts:
                continue
            compatible: list[Requirements | None] = [
                _merge(a, v) for a in alternatives for v in alts if a is None or a.has_intersection(v)
            ]
            alternatives = compatible or [_merge(a, v) for a in alternatives for v in alts]
        if alternatives == [None]:
            return []
        return [a if a is not None else Requirements() for a in alternatives]

    def _claim_alternatives(self, pvc: PersistentVolumeClaim) -> list[Requirements]:
        if pvc.spec.volume_name:
            pv = self.pvs.get(pvc.spec.volume_name)
            if pv is None:
                name = pvc.spec.volume_name
                raise VolumeTopologyError(
                    "getting existing requirements, getting persistent volume, "
                    f'persistentvolumes "{name}" not found (PersistentVolume={name})'
                )
            req = pv.spec.node_affinity.required if pv.spec.node_affinity is not None else None
            local = pv.spec.local is not None or pv.spec.host_path is not None
            alts: list[Requirements] = []
            for term in req.node_selector_terms if req is not None else []:
                exprs = list(term.match_expressions)
                if local:
                    # a local/hostPath volume's hostname does not follow the pod to a new node: a
                    # term naming only the hostname is an unconstrained alternative
                    exprs = [e for e in exprs if e.key != labels.HOSTNAME]
                    if term.match_expressions and not exprs:
                        alts.append(Requirements())
                        continue
                if exprs:
                    alts.append(Requirements.from_node_selector_requirements(exprs))
            return alts
        if not pvc.spec.storage_class_name:
            return []
        sc = self.classes.get(pvc.spec.storage_class_name)
        if sc is None:
            name = pvc.spec.storage_class_name
            raise VolumeTopologyError(
                f'getting storage class, storageclasses.storage.k8s.io "{name}" not found (StorageClass={name})'
            )
        return [
            Requirements(Requirement.new(e.key, "In", e.values) for e in t.match_label_expressions)
            for t in sc.allowed_topologies
            if t.match_label_expressions
        ]

    def validate(self, pod: Pod) -> str | None:
        """Karpenter ``ValidatePersistentVolumeClaims``: the first problem of the pod's claims.

        A pod with such a problem is not scheduled (``Failed to schedule pod, <error>``).
        """
        for key, pvc in self.claims(pod):
            name = key.split("/", 1)[1]
            if pvc is None:
                return (
                    f'getting persistent volume claim, persistentvolumeclaims "{name}" not found '
                    f"(PersistentVolumeClaim={name})"
                )
            err = self._validate_claim(key, pvc)
            if err is not None:
                return err
        return None

    def _validate_claim(self, key: str, pvc: PersistentVolumeClaim) -> str | None:
        sc_name = pvc.spec.storage_class_name or ""
        if pvc.metadata.deletion_timestamp:
            return _serr("persistentvolumeclaim is being deleted", PersistentVolumeClaim=key)
        if pvc.status.phase == "Lost":
            return _serr(
                "persistentvolumeclaim bound to non-existent persistentvolume",
                PersistentVolumeClaim=key,
                PersistentVolume=pvc.spec.volume_name or "",
            )
        if pvc.spec.volume_name:
            pv_name = pvc.spec.volume_name
            pv = self.pvs.get(pv_name)
            problem = None
            if pv is None:
                problem = f'persistentvolumes "{pv_name}" not found'
            elif pv.metadata.deletion_timestamp:
                problem = "persistentvolume is being deleted"
            if problem is not None:
                return _serr(
                    f"failed to validate pvc, {problem}",
                    PersistentVolumeClaim=key,
                    PersistentVolume=pv_name,
                    StorageClass=sc_name,
                )
            if BIND_COMPLETED not in pvc.metadata.annotations:
                # kube-scheduler treats a claim with a volumeName but without this annotation as unbound
                return _serr(
                    "pvc is considered unbound because it does not contain annotation",
                    annotation=BIND_COMPLETED,
                    PersistentVolumeClaim=pvc.metadata.name,
                    PersistentVolume=pv_name,
                )
            return None
        if not sc_name:
            return _serr(
                "unbound pvc must define a storage class", PersistentVolumeClaim=key, StorageClass=""
            )
        sc = self.classes.get(sc_name)
        if sc is None:
            return _serr(
                "failed to validate pvc, failed to get storage class, "
                f'storageclasses.storage.k8s.io "{sc_name}" not found',
                PersistentVolumeClaim=key,
                StorageClass=sc_name,
            )
        # the API server defaults an unset volumeBindingMode to Immediate
        if (sc.volume_binding_mode or IMMEDIATE) == IMMEDIATE:
            return _serr(
                "failed to validate pvc, pvc with immediate volume binding mode must be bound",
                PersistentVolumeClaim=key,
                StorageClass=sc_name,
            )
        return None


def default_storage_class(classes: Sequence[StorageClass]) -> str | None:
    """The class the API server's DefaultStorageClass admission gives a claim without
    ``storageClassName`` (an empty name is kept): among the classes annotated
    ``storageclass.kubernetes.io/is-default-class: "true"``, the newest, then the first by name."""
    defaults = [c for c in classes if c.metadata.annotations.get(IS_DEFAULT_CLASS) == "true"]
    if not defaults:
        return None
    newest = max(c.metadata.creation_timestamp or "" for c in defaults)
    return min(c.metadata.name for c in defaults if (c.metadata.creation_timestamp or "") == newest)


def _merge(a: Requirements | None, b: Requirements) -> Requirements:
    """Karpenter ``mergeVolumeRequirements``: a new set with both added (same keys intersect)."""
    out = Requirements()
    if a is not None:
        out.add_all(a)
    out.add_all(b)
    return out


def _serr(message: str, **values: str) -> str:
    """operatorpkg ``serrors.Wrap`` text: the message, then ``key=value`` pairs sorted by key."""
    return f"{message} (" + ", ".join(f"{k}={values[k]}" for k in sorted(values)) + ")"


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

    def copy(self) -> VolumeUsage:
        out = VolumeUsage.__new__(VolumeUsage)
        out._index = self._index
        out._limits = self._limits
        out._used = {drv: set(keys) for drv, keys in self._used.items()}
        return out

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
