"""The test fixture builders: Kubernetes and Karpenter objects in their wire form (camelCase dicts).

One module for every area's tests, as karpenter's ``pkg/test`` package (``test.NodePool``,
``test.Pod``, ``test.Node``, ``test.NodeClaim``...) is: each builder takes the fields a test cares
about as keyword arguments and fills in the rest. A field left at ``None`` is absent from the
object (absent and empty differ for drift hashes); a given value, even empty, is written. Tests that
need api models validate the dict (``NodePool.model_validate(builders.nodepool(...))``).
``write_cluster`` writes a ``kubectl get -o json`` List.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

T0 = "2024-01-01T00:00:00Z"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
# karpenter's fake cloud provider's NodeClass (pkg/test), and the AWS provider's
TEST_NODECLASS_REF: Mapping[str, str] = {
    "group": "karpenter.test.sh",
    "kind": "TestNodeClass",
    "name": "default",
}
AWS_NODECLASS_REF: Mapping[str, str] = {
    "group": "karpenter.k8s.aws",
    "kind": "EC2NodeClass",
    "name": "default",
}
UNSCHEDULABLE = "Unschedulable"


def _put(target: dict[str, Any], key: str, value: Any) -> None:
    """Write ``value`` unless it is None (mappings and sequences are copied)."""
    if value is None:
        return
    if isinstance(value, Mapping):
        target[key] = dict(value)
    elif isinstance(value, Sequence) and not isinstance(value, str):
        target[key] = list(value)
    else:
        target[key] = value


def metadata(
    name: str,
    *,
    namespace: str | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    uid: str | None = None,
    generation: int | None = None,
    created: str | None = None,
    deleting: bool = False,
    owners: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    _put(meta, "namespace", namespace)
    _put(meta, "uid", uid)
    _put(meta, "generation", generation)
    _put(meta, "labels", labels)
    _put(meta, "annotations", annotations)
    _put(meta, "creationTimestamp", created)
    _put(meta, "ownerReferences", owners)
    if deleting:
        meta["deletionTimestamp"] = T0
    return meta


def nodepool(
    name: str = "default",
    *,
    requirements: Sequence[Mapping[str, Any]] = (),
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] | None = None,
    startup_taints: Sequence[Mapping[str, Any]] | None = None,
    node_class_ref: Mapping[str, str] = TEST_NODECLASS_REF,
    expire_after: str | None = None,
    limits: Mapping[str, str] | None = None,
    weight: int | None = None,
    annotations: Mapping[str, str] | None = None,
    uid: str | None = None,
    generation: int | None = None,
    status: Mapping[str, Any] | None = None,
    **template_spec: Any,
) -> dict[str, Any]:
    """A ``karpenter.sh/v1`` NodePool; extra keyword arguments go into ``spec.template.spec``.
    ``requirements`` is always written (the CRD requires it; the hash ignores it)."""
    tspec: dict[str, Any] = {"nodeClassRef": dict(node_class_ref)}
    _put(tspec, "expireAfter", expire_after)
    _put(tspec, "requirements", requirements)
    _put(tspec, "taints", taints)
    _put(tspec, "startupTaints", startup_taints)
    tspec.update(template_spec)
    template: dict[str, Any] = {"spec": tspec}
    if labels is not None:
        template["metadata"] = {"labels": dict(labels)}
    spec: dict[str, Any] = {"template": template}
    _put(spec, "limits", limits)
    _put(spec, "weight", weight)
    out: dict[str, Any] = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": metadata(name, annotations=annotations, uid=uid, generation=generation),
        "spec": spec,
    }
    _put(out, "status", status)
    return out


def ec2nodeclass(
    name: str = "default",
    *,
    alias: str | None = "al2023@latest",
    uid: str | None = None,
    generation: int | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A ``karpenter.k8s.aws/v1`` EC2NodeClass that validates; keyword arguments override ``spec`` keys."""
    body: dict[str, Any] = {
        "role": "KarpenterNodeRole",
        "subnetSelectorTerms": [{"id": "subnet-1"}],
        "securityGroupSelectorTerms": [{"id": "sg-1"}],
    }
    if alias is not None:
        body["amiSelectorTerms"] = [{"alias": alias}]
    body.update(spec)
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": metadata(name, uid=uid, generation=generation),
        "spec": body,
    }


def pod(
    name: str,
    *,
    cpu: str | None = None,
    memory: str | None = None,
    requests: Mapping[str, str] | None = None,
    limits: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    node_selector: Mapping[str, str] | None = None,
    required: Sequence[Sequence[Mapping[str, Any]]] | None = None,
    preferred: Sequence[tuple[int, Sequence[Mapping[str, Any]]]] = (),
    affinity: Mapping[str, Any] | None = None,
    tolerations: Sequence[Mapping[str, Any]] | None = None,
    tsc: Sequence[Mapping[str, Any]] = (),
    init: Sequence[Mapping[str, str]] = (),
    overhead: Mapping[str, str] | None = None,
    ports: Sequence[Mapping[str, Any]] = (),
    node_name: str | None = None,
    owner: Mapping[str, str] | None = None,
    claims: Sequence[str] = (),
    ephemeral: Sequence[str] = (),
    pod_resources: Mapping[str, Mapping[str, str]] | None = None,
    deleting: bool = False,
    pending: bool = True,
    pending_since: str | None = None,
    namespace: str = "default",
    uid: str | None = None,
    created: str | None = T0,
    image: str | None = None,
    phase: str | None = None,
) -> dict[str, Any]:
    """A ``v1`` Pod with one container ``app``; pending (``PodScheduled=False/Unschedulable``) unless
    ``node_name`` binds it or ``pending=False``. ``required`` holds node-affinity terms (OR of ANDs),
    ``preferred`` (weight, expressions) pairs, ``tsc`` topology spread constraints, ``claims`` PVC
    names, ``ephemeral`` storage classes of ephemeral volumes, ``pod_resources`` pod-level resources;
    ``phase`` overrides the status phase (``Running`` when bound, else ``Pending``)."""
    reqs: dict[str, str] = dict(requests or {})
    if cpu is not None:
        reqs["cpu"] = cpu
    if memory is not None:
        reqs["memory"] = memory
    container: dict[str, Any] = {"name": "app", "resources": {"requests": reqs, "limits": dict(limits or {})}}
    _put(container, "image", image)
    if ports:
        container["ports"] = list(ports)
    spec: dict[str, Any] = {"containers": [container]}
    _put(spec, "tolerations", tolerations)
    if init:
        spec["initContainers"] = [
            {"name": f"init-{i}", "resources": {"requests": dict(r)}} for i, r in enumerate(init)
        ]
    if overhead:
        spec["overhead"] = dict(overhead)
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if tsc:
        spec["topologySpreadConstraints"] = list(tsc)
    aff: dict[str, Any] = dict(affinity or {})
    if required is not None or preferred:
        na: dict[str, Any] = {}
        if required is not None:
            na["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [{"matchExpressions": list(t)} for t in required]
            }
        if preferred:
            na["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": w, "preference": {"matchExpressions": list(t)}} for w, t in preferred
            ]
        aff["nodeAffinity"] = na
    if aff:
        spec["affinity"] = aff
    if node_name:
        spec["nodeName"] = node_name
    if claims or ephemeral:
        # an ephemeral volume's claim is named <pod>-<volume> (storage class names are not needed)
        spec["volumes"] = [
            {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
        ] + [
            {"name": f"e{i}", "ephemeral": {"volumeClaimTemplate": {"spec": {"storageClassName": sc}}}}
            for i, sc in enumerate(ephemeral)
        ]
    if pod_resources is not None:
        spec["resources"] = {k: dict(v) for k, v in pod_resources.items()}
    meta = metadata(
        name,
        namespace=namespace,
        uid=uid,
        labels=labels if labels is not None else {},
        created=created,
        deleting=deleting,
        owners=[owner] if owner else None,
    )
    status: dict[str, Any] = {"phase": phase or ("Running" if node_name else "Pending")}
    if pending and not node_name:
        condition = {"type": "PodScheduled", "status": "False", "reason": UNSCHEDULABLE}
        _put(condition, "lastTransitionTime", pending_since)
        status["conditions"] = [condition]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def node(
    name: str,
    *,
    labels: Mapping[str, str],
    capacity: Mapping[str, str] | None = None,
    allocatable: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] = (),
    deleting: bool = False,
    provider_id: str | None = None,
    hostname_label: bool = True,
) -> dict[str, Any]:
    """A ``v1`` Node labelled with its hostname (unless ``hostname_label=False``: exactly ``labels``);
    capacity defaults to none, allocatable to capacity."""
    capacity = capacity or {}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": metadata(
            name, labels={HOSTNAME: name, **labels} if hostname_label else dict(labels), deleting=deleting
        ),
        "spec": {"taints": list(taints), "providerID": provider_id or f"fake://{name}"},
        "status": {"capacity": dict(capacity), "allocatable": dict(allocatable or capacity)},
    }


def nodeclaim(
    name: str,
    *,
    nodepool_name: str = "default",
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    capacity: Mapping[str, str] | None = None,
    allocatable: Mapping[str, str] | None = None,
    conditions: Sequence[Mapping[str, Any]] | None = None,
    node_class_ref: Mapping[str, str] | None = None,
    node_name: str | None = None,
    provider_id: str | None = None,
    owner_uid: str | None = None,
    created: str | None = None,
) -> dict[str, Any]:
    """A ``karpenter.sh/v1`` NodeClaim of ``nodepool_name`` (label always set; ``owner_uid`` adds the
    NodePool owner reference)."""
    owners = (
        [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": nodepool_name, "uid": owner_uid}]
        if owner_uid
        else None
    )
    spec: dict[str, Any] = {"requirements": []}
    if node_class_ref is not None:
        spec = {"nodeClassRef": dict(node_class_ref), **spec}
    status: dict[str, Any] = {}
    _put(status, "capacity", capacity)
    _put(status, "allocatable", allocatable if allocatable is not None else capacity)
    _put(status, "conditions", conditions)
    _put(status, "nodeName", node_name)
    _put(status, "providerID", provider_id)
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": metadata(
            name,
            labels={NODEPOOL_LABEL: nodepool_name, **(labels or {})},
            annotations=annotations,
            created=created,
            owners=owners,
        ),
        "spec": spec,
        "status": status,
    }


def daemonset(
    name: str, *, cpu: str | None = None, memory: str | None = None, **pod_kw: Any
) -> dict[str, Any]:
    """An ``apps/v1`` DaemonSet whose pod template is :func:`pod` (not pending)."""
    template = pod(name, cpu=cpu, memory=memory, pending=False, **pod_kw)
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": metadata(name, namespace="default"),
        "spec": {"template": {"metadata": {"labels": {}}, "spec": template["spec"]}},
    }


def storage_class(
    name: str,
    *,
    zones: Sequence[str] | None = None,
    allowed: Sequence[Mapping[str, Sequence[str]]] = (),
    mode: str | None = "WaitForFirstConsumer",
    provisioner: str = "test-provisioner",
    default: bool = False,
    created: str | None = None,
) -> dict[str, Any]:
    """Upstream ``test.StorageClass``: ``zones`` as one allowedTopologies term, or ``allowed``
    terms (key -> values each); ``default`` annotates it as the cluster's default class."""
    terms = [
        {"matchLabelExpressions": [{"key": k, "values": list(v)} for k, v in t.items()]} for t in allowed
    ]
    if not terms and zones is not None:
        terms = [{"matchLabelExpressions": [{"key": ZONE, "values": list(zones)}]}]
    meta: dict[str, Any] = {"name": name, "creationTimestamp": created}
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    doc: dict[str, Any] = {"metadata": meta, "provisioner": provisioner, "allowedTopologies": terms}
    if mode is not None:
        doc["volumeBindingMode"] = mode
    return doc


def pvc(
    name: str, *, storage_class: str | None = None, volume: str | None = None, **meta: Any
) -> dict[str, Any]:
    """Upstream ``test.PersistentVolumeClaim``: a claim with a ``volume`` carries the
    ``pv.kubernetes.io/bind-completed`` annotation; ``meta`` adds metadata fields."""
    annotations = {"pv.kubernetes.io/bind-completed": "yes"} if volume else {}
    spec: dict[str, Any] = {"storageClassName": storage_class, "volumeName": volume}
    return {
        "metadata": {"name": name, "namespace": "default", "annotations": annotations, **meta},
        "spec": spec,
    }


def pv(
    name: str,
    *,
    zones: Sequence[str] | None = None,
    terms: Sequence[Sequence[Mapping[str, Any]]] | None = None,
    source: str = "csi",
    storage_class: str | None = None,
) -> dict[str, Any]:
    """Upstream ``test.PersistentVolume``: node affinity from ``terms`` (match expressions per
    term) or ``zones``; ``source`` is ``csi`` (driver ``test.driver``), ``local`` or ``hostPath``."""
    spec: dict[str, Any] = {"storageClassName": storage_class}
    spec[source] = (
        {"driver": "test.driver", "volumeHandle": "test-handle"} if source == "csi" else {"path": "/mnt"}
    )
    if terms is None and zones is not None:
        terms = [[{"key": ZONE, "operator": "In", "values": list(zones)}]]
    if terms is not None:
        spec["nodeAffinity"] = {
            "required": {"nodeSelectorTerms": [{"matchExpressions": list(t)} for t in terms]}
        }
    return {"metadata": {"name": name}, "spec": spec}


def cluster_list(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A ``kubectl get ... -o json`` List."""
    return {"apiVersion": "v1", "kind": "List", "items": [dict(i) for i in items]}


def write_cluster(path: Path, items: Sequence[Mapping[str, Any]]) -> Path:
    path.write_text(json.dumps(cluster_list(items)))
    return path


def pdb(
    name: str,
    *,
    match_labels: Mapping[str, str] | None = None,
    disruptions_allowed: int = 0,
    max_unavailable: int | str | None = None,
    min_available: int | str | None = None,
    unhealthy_pod_eviction_policy: str | None = None,
    namespace: str = "default",
) -> dict[str, Any]:
    """A ``policy/v1`` PodDisruptionBudget selecting ``match_labels``, with its status."""
    spec: dict[str, Any] = {"selector": {"matchLabels": dict(match_labels or {})}}
    _put(spec, "maxUnavailable", max_unavailable)
    _put(spec, "minAvailable", min_available)
    _put(spec, "unhealthyPodEvictionPolicy", unhealthy_pod_eviction_policy)
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": metadata(name, namespace=namespace),
        "spec": spec,
        "status": {"disruptionsAllowed": disruptions_allowed},
    }
