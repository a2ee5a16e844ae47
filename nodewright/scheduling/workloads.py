"""Pods that do not exist yet but will: what workload controllers create and CapacityBuffers hold.

* Workloads (a what-if of ``kubectl scale``): a Deployment, a ReplicaSet not controlled by a listed
  Deployment, or a StatefulSet wanting ``replicas`` (unset: 1) pods, with fewer active pods in its
  namespace matching its selector (or owned by it when it has no selector), gets the missing pods
  from its pod template; a StatefulSet gets the missing ordinals (``<name>-<i>``). A Job that is not
  suspended or finished gets ``min(parallelism, completions - succeeded) - active`` pods
  (parallelism unset: 1; completions unset: one success completes it). The pods carry the template
  (resources, affinity, topology spread, tolerations, nodeSelector) and look unschedulable, as the
  pods the scheduler has just failed to place do when Karpenter sees them.
* CapacityBuffers (feature gate CapacityBuffer), from kubernetes-sigs/karpenter v1.14.1
  ``pkg/controllers/capacitybuffer`` (``computeReplicas``: the max of ``replicas`` and the percentage
  of the scalable's replicas, capped by ``limits``; limits alone when neither is set:
  ``calculateLimitReplicas`` floors limit/request per resource and takes the minimum;
  ``calculatePercentageReplicas`` rounds up, at least 1), ``pkg/utils/apps/resolve.go`` (the pod
  template of a PodTemplate or of an apps/v1 Deployment, StatefulSet or ReplicaSet; replicas unset
  count as 1) and ``pkg/state/virtualpods`` (``BuildVirtualPods``: ``capacity-buffer-<name>-<i>``
  from 1, template labels, the fake-pod annotations, priority MinInt32, PVC and ephemeral volumes
  dropped).

Boundary: pure: models in, models out; no I/O.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from nodewright.algebra.quantity import QuantityError, parse_quantity
from nodewright.algebra.resources import PODS, requests_for_pod
from nodewright.api.core import (
    Condition,
    ObjectMeta,
    OwnerReference,
    PersistentVolumeClaim,
    Pod,
    PodSpec,
    PodStatus,
    PodTemplateSpec,
    Volume,
)
from nodewright.api.documents import Document
from nodewright.api.loading import Objects, build
from nodewright.api.workloads import CapacityBuffer, Deployment, Job, PodTemplate, ReplicaSet, StatefulSet
from nodewright.cluster.state import ClusterState
from nodewright.errors import InputError
from nodewright.scheduling import podutil
from nodewright.scheduling.topologyselector import RawSelector, selector_for_matching

MAX_INT32: Final = 2**31 - 1
VIRTUAL_POD_PRIORITY: Final = -(2**31)
FAKE_POD_ANNOTATION: Final = "karpenter.sh/capacity-buffer-fake-pod"
BUFFER_NAME_ANNOTATION: Final = "karpenter.sh/capacity-buffer-name"
BUFFER_NAMESPACE_ANNOTATION: Final = "karpenter.sh/capacity-buffer-namespace"
_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' generated-name alphabet
# a bound on generated pods, so a typo (replicas: 1000000) cannot exhaust memory
MAX_GENERATED_PODS: Final = 200_000

Workload = Deployment | ReplicaSet | StatefulSet | Job
Input = Deployment | ReplicaSet | StatefulSet | Job | PodTemplate | CapacityBuffer


@dataclass(frozen=True, kw_only=True)
class Generated:
    """Pods added to a round, with where each came from (``Deployment default/inflate``)."""

    pods: tuple[Pod, ...] = ()
    sources: dict[str, str] = field(default_factory=dict)  # pod key -> source
    buffer_keys: frozenset[str] = frozenset()
    notes: tuple[str, ...] = ()
    # the PVCs a StatefulSet's controller creates for new pods (volumeClaimTemplates), unbound
    pvcs: tuple[PersistentVolumeClaim, ...] = ()


def _unschedulable() -> PodStatus:
    return PodStatus(
        phase="Pending",
        conditions=[Condition(type="PodScheduled", status="False", reason="Unschedulable")],
    )


def _suffix(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:5])


def _ns(obj: Input) -> str:
    return obj.metadata.namespace or "default"


def _owned_by(pod: Pod, kind: str, name: str) -> bool:
    return any(o.kind == kind and o.name == name for o in pod.metadata.owner_references)


class _PodIndex:
    """Active pods by namespace and by (namespace, label, value): a workload looks at the pods
    carrying its first ``matchLabels`` pair only, so many workloads over many pods stay linear."""

    def __init__(self, pods: Sequence[Pod]) -> None:
        self.by_ns: dict[str, list[Pod]] = {}
        self.by_label: dict[tuple[str, str, str], list[Pod]] = {}
        for p in pods:
            if not podutil.is_active(p):
                continue
            ns = p.metadata.namespace or "default"
            self.by_ns.setdefault(ns, []).append(p)
            for k, v in p.metadata.labels.items():
                self.by_label.setdefault((ns, k, v), []).append(p)

    def members(self, obj: Workload) -> list[Pod]:
        """Active pods of the workload: in its namespace, matching its selector (owned by it without one)."""
        ns = _ns(obj)
        sel = obj.spec.selector
        if sel is None:
            return [p for p in self.by_ns.get(ns, ()) if _owned_by(p, obj.kind, obj.metadata.name)]
        match = selector_for_matching(RawSelector.of(sel.match_labels, sel.match_expressions))
        if sel.match_labels:
            k, v = next(iter(sel.match_labels.items()))
            candidates: Sequence[Pod] = self.by_label.get((ns, k, v), ())
        else:
            candidates = self.by_ns.get(ns, ())
        return [p for p in candidates if match.matches(p.metadata.labels)]


def _pod(name: str, ns: str, template: PodTemplateSpec, owner: Workload) -> Pod:
    meta = ObjectMeta(
        name=name,
        namespace=ns,
        labels=dict(template.metadata.labels),
        annotations=dict(template.metadata.annotations),
        owner_references=[
            OwnerReference(
                api_version=owner.api_version, kind=owner.kind, name=owner.metadata.name, controller=True
            )
        ],
    )
    return Pod(metadata=meta, spec=template.spec, status=_unschedulable())


def _wanted(obj: Workload, have: int) -> int:
    if isinstance(obj, Job):
        spec, status = obj.spec, obj.status
        if spec.suspend or status.completion_time:
            return 0
        succeeded = status.succeeded or 0
        parallelism = 1 if spec.parallelism is None else spec.parallelism
        if spec.completions is None:
            target = 0 if succeeded > 0 else parallelism
        else:
            target = min(parallelism, max(spec.completions - succeeded, 0))
        active = status.active if status.active is not None else have
        return max(target - active, 0)
    replicas = 1 if obj.spec.replicas is None else obj.spec.replicas
    return max(replicas - have, 0)


def _stateful_pod(
    pod_name: str, ns: str, sts: StatefulSet, listed: set[tuple[str, str]]
) -> tuple[Pod, list[PersistentVolumeClaim]]:
    """A StatefulSet pod with its claims ``<template>-<pod>`` (the StatefulSet controller's names);
    the claims not listed in the cluster are created unbound from the template."""
    pod = _pod(pod_name, ns, sts.spec.template, sts)
    if not sts.spec.volume_claim_templates:
        return pod, []
    volumes = {v.name: v for v in pod.spec.volumes}
    claims: list[PersistentVolumeClaim] = []
    for vct in sts.spec.volume_claim_templates:
        claim = f"{vct.metadata.name}-{pod_name}"
        volumes[vct.metadata.name] = Volume.model_validate(
            {"name": vct.metadata.name, "persistentVolumeClaim": {"claimName": claim}}
        )
        if (ns, claim) not in listed:
            claims.append(PersistentVolumeClaim(metadata=ObjectMeta(name=claim, namespace=ns), spec=vct.spec))
    spec = pod.spec.model_copy(update={"volumes": list(volumes.values())})
    return pod.model_copy(update={"spec": spec}), claims


def workload_pods(
    workloads: Iterable[Workload],
    pods: Sequence[Pod],
    *,
    budget: int = MAX_GENERATED_PODS,
    pvcs: Iterable[PersistentVolumeClaim] = (),
) -> Generated:
    """The pods the workloads' controllers would create beyond those already there (``pvcs``: the
    cluster's claims, which a StatefulSet's new pod reuses by name)."""
    items = list(workloads)
    if not items:
        return Generated()
    deployments = {(_ns(d), d.metadata.name) for d in items if isinstance(d, Deployment)}
    index = _PodIndex(pods)
    pvcs_listed = {(c.metadata.namespace or "default", c.metadata.name) for c in pvcs}
    new_pvcs: list[PersistentVolumeClaim] = []
    out: list[Pod] = []
    sources: dict[str, str] = {}
    notes: list[str] = []
    for w in items:
        ns, name = _ns(w), w.metadata.name
        if isinstance(w, ReplicaSet) and any(
            o.kind == "Deployment" and (ns, o.name) in deployments for o in w.metadata.owner_references
        ):
            continue  # the Deployment's count decides
        members = index.members(w)
        missing = _wanted(w, len(members))
        if missing > budget - len(out):
            notes.append(
                f"{w.kind} {ns}/{name}: {missing} pods exceed the bound of {budget} generated pods; capped"
            )
            missing = max(budget - len(out), 0)
        source = f"{w.kind} {ns}/{name}"
        if isinstance(w, StatefulSet):
            taken = {p.metadata.name for p in members}
            i = 0
            made = 0
            while made < missing:
                pod_name = f"{name}-{i}"
                i += 1
                if pod_name in taken:
                    continue
                made += 1
                pod, claims = _stateful_pod(pod_name, ns, w, pvcs_listed)
                out.append(pod)
                new_pvcs.extend(claims)
                sources[pod.key] = source
            continue
        # a Deployment's pods are named after its ReplicaSet: <name>-<template hash>-<suffix>
        prefix = (
            name if isinstance(w, ReplicaSet | Job) else f"{name}-{_suffix(ns + '/' + name)}{_suffix(name)}"
        )
        for i in range(missing):
            out.append(_pod(f"{prefix}-{_suffix(f'{source}#{i}')}", ns, w.spec.template, w))
            sources[out[-1].key] = source
    return Generated(pods=tuple(out), sources=sources, notes=tuple(notes), pvcs=tuple(new_pvcs))


# -- CapacityBuffers ---------------------------------------------------------------------------


def limit_replicas(limits: dict[str, object], spec: PodSpec) -> tuple[int, bool]:
    """``calculateLimitReplicas``: floor(limit / request) minimised over the resources both name."""
    requests = {k: v for k, v in requests_for_pod(Pod(spec=spec)).items() if k != PODS and v}
    if not requests:
        return 0, False
    best = MAX_INT32
    matched = False
    for name, raw in limits.items():
        request = requests.get(name)
        if not request:
            continue
        try:
            limit_milli = parse_quantity(raw).milli  # type: ignore[arg-type]
        except QuantityError:
            continue
        matched = True
        best = min(best, min(limit_milli // request, MAX_INT32))
    return (best, True) if matched else (0, False)


def percentage_replicas(scalable_replicas: int, percentage: int) -> int:
    """``calculatePercentageReplicas``: ceil(replicas x percentage / 100), at least 1 when both > 0."""
    got = math.ceil(scalable_replicas * percentage / 100)
    if got < 1 and percentage > 0 and scalable_replicas > 0:
        got = 1
    return got


def buffer_replicas(cb: CapacityBuffer, spec: PodSpec, scalable_replicas: int | None) -> int:
    """``computeReplicas``: max(replicas, percentage of the scalable), capped by the limits."""
    candidates: list[int] = []
    if cb.spec.percentage is not None and scalable_replicas:
        candidates.append(percentage_replicas(scalable_replicas, cb.spec.percentage))
    if cb.spec.replicas is not None:
        candidates.append(cb.spec.replicas)
    desired = max(candidates) if candidates else 0
    if cb.spec.limits is not None:
        by_limit, ok = limit_replicas(dict(cb.spec.limits), spec)
        if ok:
            return min(desired, by_limit) if candidates else by_limit
    return desired


def _resolve(cb: CapacityBuffer, inputs: Inputs) -> tuple[PodTemplateSpec | None, int | None, str]:
    """(template, scalable replicas, why unresolved) as ``apps.ResolveCapacityBuffer``."""
    ns = _ns(cb)
    ref = cb.spec.pod_template_ref
    if ref is not None:
        for pt in inputs.podtemplates:
            if (pt.metadata.namespace or "default") == ns and pt.metadata.name == ref.name:
                return pt.template, None, ""
        return None, None, f'podtemplates "{ref.name}" not found'
    sref = cb.spec.scalable_ref
    if sref is None:
        return None, None, "Neither podTemplateRef nor scalableRef is set"
    if (sref.api_group or "apps") != "apps":
        return None, None, f'unsupported scalableRef API group "{sref.api_group}"'
    pools: dict[str, Sequence[Deployment | StatefulSet | ReplicaSet]] = {
        "Deployment": inputs.deployments,
        "StatefulSet": inputs.statefulsets,
        "ReplicaSet": inputs.replicasets,
    }
    if sref.kind not in pools:
        return None, None, f'unsupported kind "{sref.kind}"'
    for w in pools[sref.kind]:
        if _ns(w) == ns and w.metadata.name == sref.name:
            return w.spec.template, 1 if w.spec.replicas is None else w.spec.replicas, ""
    return None, None, f'{sref.kind.lower()}s.apps "{sref.name}" not found'


def _sanitized(spec: PodSpec) -> PodSpec:
    dropped = {
        v.name for v in spec.volumes if v.persistent_volume_claim is not None or v.ephemeral is not None
    }
    return spec.model_copy(
        update={
            "node_name": None,
            "priority": VIRTUAL_POD_PRIORITY,
            "volumes": [v for v in spec.volumes if v.name not in dropped],
        }
    )


def buffer_pods(inputs: Inputs, *, budget: int = MAX_GENERATED_PODS) -> Generated:
    """The virtual pods of every CapacityBuffer the buffer controller would resolve."""
    out: list[Pod] = []
    sources: dict[str, str] = {}
    notes: list[str] = []
    for cb in sorted(inputs.capacitybuffers, key=lambda b: (_ns(b), b.metadata.name)):
        template, scalable, why = _resolve(cb, inputs)
        if template is None:
            notes.append(f"CapacityBuffer {cb.key}: not ready for provisioning: {why}")
            continue
        count = buffer_replicas(cb, template.spec, scalable)
        if count > budget - len(out):
            notes.append(
                f"CapacityBuffer {cb.key}: {count} pods exceed the bound of {budget} generated pods; capped"
            )
            count = max(budget - len(out), 0)
        spec = _sanitized(template.spec)
        for i in range(1, count + 1):
            meta = ObjectMeta(
                name=f"capacity-buffer-{cb.metadata.name}-{i}",
                namespace=_ns(cb),
                labels=dict(template.metadata.labels),
                annotations={
                    FAKE_POD_ANNOTATION: "true",
                    BUFFER_NAME_ANNOTATION: cb.metadata.name,
                    BUFFER_NAMESPACE_ANNOTATION: _ns(cb),
                },
            )
            out.append(Pod(metadata=meta, spec=spec, status=_unschedulable()))
            sources[out[-1].key] = f"CapacityBuffer {cb.key}"
    return Generated(pods=tuple(out), sources=sources, buffer_keys=frozenset(sources), notes=tuple(notes))


# the model of each input kind (ClusterState keeps them as documents: ``ClusterState.raw(kind)``)
MODELS: Final[dict[str, type[Input]]] = {
    "Deployment": Deployment,
    "ReplicaSet": ReplicaSet,
    "StatefulSet": StatefulSet,
    "Job": Job,
    "PodTemplate": PodTemplate,
    "CapacityBuffer": CapacityBuffer,
}


@dataclass(frozen=True, kw_only=True)
class Inputs:
    """The workloads, PodTemplates and CapacityBuffers of a round, typed."""

    deployments: tuple[Deployment, ...] = ()
    replicasets: tuple[ReplicaSet, ...] = ()
    statefulsets: tuple[StatefulSet, ...] = ()
    jobs: tuple[Job, ...] = ()
    podtemplates: tuple[PodTemplate, ...] = ()
    capacitybuffers: tuple[CapacityBuffer, ...] = ()

    @staticmethod
    def of(items: Iterable[Input]) -> Inputs:
        listed = list(items)
        return Inputs(
            deployments=tuple(o for o in listed if isinstance(o, Deployment)),
            replicasets=tuple(o for o in listed if isinstance(o, ReplicaSet)),
            statefulsets=tuple(o for o in listed if isinstance(o, StatefulSet)),
            jobs=tuple(o for o in listed if isinstance(o, Job)),
            podtemplates=tuple(o for o in listed if isinstance(o, PodTemplate)),
            capacitybuffers=tuple(o for o in listed if isinstance(o, CapacityBuffer)),
        )

    def all(self) -> list[Input]:
        return [
            *self.deployments,
            *self.replicasets,
            *self.statefulsets,
            *self.jobs,
            *self.podtemplates,
            *self.capacitybuffers,
        ]


def inputs_from_documents(docs: Iterable[Document]) -> list[Input]:
    """The round inputs among documents, built (and, for CapacityBuffers, admitted by the shipped
    CRD); a bad shape is a located error. Other apiVersions are not these kinds and are skipped."""
    out: list[Input] = []
    for doc in docs:
        model = MODELS.get(doc.kind)
        if model is None or doc.api_version != model.model_fields["api_version"].default:
            continue
        out.append(build(doc, model))
    return out


def cluster_inputs(cluster: ClusterState) -> list[Input]:
    """The round inputs a cluster state lists (its raw documents of those kinds)."""
    return inputs_from_documents(d for kind in MODELS for d in cluster.raw(kind))


def merge_inputs(listed: Sequence[Input], branch: Sequence[Input]) -> Inputs:
    """``listed`` (the cluster's) with ``branch`` (e.g. ``-f``) replacing objects of the same kind,
    namespace and name, and added otherwise."""
    mine = {(o.kind, _ns(o), o.metadata.name): o for o in branch}
    merged = [mine.pop((o.kind, _ns(o), o.metadata.name), o) for o in listed]
    return Inputs.of([*merged, *mine.values()])


_SCALE_KINDS: Final = {
    "deployment": "Deployment",
    "deploy": "Deployment",
    "deployments": "Deployment",
    "replicaset": "ReplicaSet",
    "rs": "ReplicaSet",
    "replicasets": "ReplicaSet",
    "statefulset": "StatefulSet",
    "sts": "StatefulSet",
    "statefulsets": "StatefulSet",
    "job": "Job",
    "jobs": "Job",
}


@dataclass(frozen=True)
class Scale:
    """A what-if ``kubectl scale``: ``kind`` ``namespace/name`` to ``replicas`` (a Job: parallelism)."""

    kind: str
    namespace: str
    name: str
    replicas: int


def parse_scale(text: str, *, source: str = "--scale") -> Scale:
    """``[NAMESPACE/]KIND/NAME=N`` (kubectl's kind names and short names), e.g. ``deployment/inflate=5``."""
    target, sep, count = text.partition("=")
    parts = target.split("/")
    if not sep or len(parts) not in (2, 3) or not all(parts):
        raise InputError(f"{text!r} is not [NAMESPACE/]KIND/NAME=N (e.g. deployment/inflate=5)", file=source)
    ns, kind_text, name = parts if len(parts) == 3 else ["default", *parts]
    kind = _SCALE_KINDS.get(kind_text.lower())
    if kind is None:
        raise InputError(
            f"{text!r}: cannot scale {kind_text!r}; one of deployment, replicaset, statefulset, job",
            file=source,
        )
    if not count.strip().isdigit():
        raise InputError(f"{text!r}: the replica count must be a whole number >= 0", file=source)
    return Scale(kind=kind, namespace=ns, name=name, replicas=int(count))


def _scaled(merged: Inputs, scales: Sequence[Scale]) -> Inputs:
    items = merged.all()
    for sc in scales:
        for i, o in enumerate(items):
            if (
                isinstance(o, Deployment | ReplicaSet | StatefulSet | Job)
                and o.kind == sc.kind
                and _ns(o) == sc.namespace
                and o.metadata.name == sc.name
            ):
                field_name = "parallelism" if isinstance(o, Job) else "replicas"
                items[i] = o.model_copy(update={"spec": o.spec.model_copy(update={field_name: sc.replicas})})
                break
        else:
            raise InputError(
                f"no {sc.kind} {sc.namespace}/{sc.name} in the cluster state or the files to scale",
                file="--scale",
            )
    return Inputs.of(items)


def round_pods(
    cluster: ClusterState,
    inputs: Sequence[Input] = (),
    *,
    capacity_buffer: bool,
    scales: Sequence[Scale] = (),
) -> tuple[Generated, Generated]:
    """(workload pods, buffer pods) of a round over ``cluster`` with the branch's ``inputs``
    (:func:`merge_inputs`) and ``scales`` applied; buffer pods only with the CapacityBuffer gate."""
    merged = _scaled(merge_inputs(cluster_inputs(cluster), inputs), scales)
    workloads: list[Workload] = [*merged.deployments, *merged.replicasets, *merged.statefulsets, *merged.jobs]
    gen = workload_pods(workloads, cluster.pods, pvcs=cluster.pvcs)
    if not capacity_buffer:
        off = "CapacityBuffers are not planned: feature gate CapacityBuffer is off (--feature-gates CapacityBuffer=true)"
        return gen, Generated(notes=(off,) if merged.capacitybuffers else ())
    return gen, buffer_pods(merged, budget=MAX_GENERATED_PODS - len(gen.pods))


def branch_inputs(objs: Objects) -> list[Input]:
    """The round inputs among objects read from files (``-f``)."""
    return inputs_from_documents(objs.documents)
