"""The stack plan's launch templates: the distinct user data of each NodePool on its EC2NodeClass.

Boundary: pure (no ``pulumi``). Every launch template carries exactly what
``nodewright.userdata.launch_options`` + ``render`` produce (what ``nodewright render userdata``
prints), one per distinct user data, i.e. per max-pods group as Karpenter renders them:

* ``spec.kubelet.maxPods`` set: one group (every instance type gets the same user data);
* fleet mode: the claims' instance types, grouped by (capacity type, the type's pod count);
* karpenter mode: every catalog instance type compatible with the NodePool's requirements (and
  with an available offering in its zones / capacity types), grouped by pod count, rendered for the
  pool's default capacity type (its only value, else on-demand, as ``render userdata``).

Each group also carries the launch template Karpenter would create for it
(:func:`nodewright.userdata.launch_template.launch_template_spec`): in fleet mode a claim that
requests ``vpc.amazonaws.com/efa`` gets one EFA interface per EFA of its instance type (the
catalog's count), so groups are also split by EFA count, as Karpenter's resolver does.

The NodePool and EC2NodeClass are built with shape validation only: admission rules (restricted
labels, ...) are the policy pack's to report, by name, so a bad pool still previews. Renderer
errors become :class:`~nodewright.errors.InputError` pointing into the EC2NodeClass document or
the stack's ``nodewright:cluster`` config; messages never contain the CA bundle.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from nodewright import labels
from nodewright.algebra.requirements import Requirements
from nodewright.api import EC2NodeClass, NodePool
from nodewright.api.documents import Document
from nodewright.api.loading import build
from nodewright.catalog import Catalog, InstanceType
from nodewright.catalog.loader import DEFAULT_SPEC
from nodewright.catalog.memo import by_catalog_keys
from nodewright.crd import Release
from nodewright.errors import InputError
from nodewright.settings import KarpenterSettings
from nodewright.userdata.dispatch import render as render_family
from nodewright.userdata.launch import (
    FALLBACK_MAX_PODS,
    capacity_type_for,
    cluster_info_from_mapping,
    launch_options,
)
from nodewright.userdata.launch_template import (
    EFA_RESOURCE,
    INSTANCE_TENANCY_LABEL,
    NIP_SLOTS_RESOURCE,
    RESERVATION_INTERRUPTIBLE_LABEL,
    RESERVATION_TYPE_LABEL,
    LaunchTemplateSpec,
    instance_type_efa_count,
    launch_template_spec,
)
from nodewright.userdata.nodeclass import nodeclass_catalog
from nodewright.userdata.options import UserDataError

log = logging.getLogger("nodewright")

DEFAULT_CATALOG: Final = DEFAULT_SPEC


@dataclass(frozen=True, order=True)
class ClaimLaunch:
    """What a fleet-mode claim's launch needs from its template (Karpenter's per-launch values)."""

    instance_type: str
    capacity_type: str
    efa: bool = False  # the claim requests vpc.amazonaws.com/efa
    reservation_id: str = ""  # karpenter.k8s.aws/capacity-reservation-id of a reserved launch
    reservation_type: str = ""  # karpenter.k8s.aws/capacity-reservation-type (default, capacity-block)
    interruptible: bool = False  # karpenter.k8s.aws/capacity-reservation-interruptible
    tenancy: str = "default"  # karpenter.k8s.aws/instance-tenancy
    enclave: bool = False  # the claim requests eks.amazonaws.com/nip-slots

    @classmethod
    def of_claim(cls, claim: Mapping[str, object]) -> ClaimLaunch:
        """From one ``nodeClaims[]`` item of the claims file (``launch``, ``labels``, ``requests``)."""
        launch = claim.get("launch")
        launch = launch if isinstance(launch, Mapping) else {}
        raw_labels = claim.get("labels")
        lbls = raw_labels if isinstance(raw_labels, Mapping) else {}
        raw_requests = claim.get("requests")
        requests = raw_requests if isinstance(raw_requests, Mapping) else {}
        ct = str(launch.get("capacityType", ""))
        reserved = ct == labels.CAPACITY_TYPE_RESERVED
        return cls(
            instance_type=str(launch.get("instanceType", "")),
            capacity_type=ct,
            efa=EFA_RESOURCE in requests,
            reservation_id=str(lbls.get(labels.CAPACITY_RESERVATION_ID, "")) if reserved else "",
            reservation_type=str(lbls.get(RESERVATION_TYPE_LABEL, "")) if reserved else "",
            interruptible=reserved and str(lbls.get(RESERVATION_INTERRUPTIBLE_LABEL, "")) == "true",
            tenancy=str(lbls.get(INSTANCE_TENANCY_LABEL) or "default"),
            enclave=NIP_SLOTS_RESOURCE in requests,
        )


@dataclass(frozen=True, kw_only=True)
class UserDataGroup:
    """One launch template: its user data and the instance types (fleet: the claims) that share it."""

    text: str  # decoded, as the node receives it
    max_pods: int  # the --max-pods / maxPods the kubelet gets
    capacity_type: str
    instance_types: tuple[str, ...]  # sorted; empty when the group is not tied to types
    efa_count: int = 0
    reservation_id: str = ""
    tenancy: str = "default"
    enclave: bool = False
    claims: tuple[ClaimLaunch, ...] = ()  # fleet: the claim launches this template serves
    spec: LaunchTemplateSpec | None = None  # the launch template Karpenter would create

    def key_suffix(self) -> str:
        """``-efa<N>``, ``-<reservation id>``, ``-<tenancy>``, ``-enclave`` for what is not the default."""
        parts = [f"efa{self.efa_count}"] if self.efa_count else []
        parts += [self.reservation_id] if self.reservation_id else []
        parts += [self.tenancy] if self.tenancy != "default" else []
        parts += ["enclave"] if self.enclave else []
        return "".join(f"-{p}" for p in parts)


_GroupKey = tuple[str, int | None, int, str, str, bool, str, bool]


def _compatible(it: InstanceType, reqs: Requirements) -> bool:
    if not it.requirements.has_intersection(reqs):
        return False
    zones, cts = reqs.get(labels.ZONE), reqs.get(labels.CAPACITY_TYPE)
    return any(o.available and zones.has(o.zone) and cts.has(o.capacity_type) for o in it.offerings)


def compatible_instance_types(catalog: Catalog, nodepool: NodePool) -> list[InstanceType]:
    """Catalog types a NodeClaim of ``nodepool`` could launch (requirements + an available offering)."""
    reqs = Requirements.from_node_selector_requirements(nodepool.spec.template.spec.requirements)
    types = list(catalog)
    return list(
        by_catalog_keys("launchtemplates.compatible", types, reqs, lambda: _compatible_types(types, reqs))
    )


def _compatible_types(types: Sequence[InstanceType], reqs: Requirements) -> list[InstanceType]:
    return [it for it in types if _compatible(it, reqs)]


def render_groups(
    nodeclass_doc: Document,
    nodepool_doc: Document,
    cluster: Mapping[str, str],
    *,
    cluster_file: str,
    claims: Sequence[ClaimLaunch] = (),
    catalog: str = DEFAULT_CATALOG,
    security_group_ids: Sequence[str] = (),
    settings: KarpenterSettings | None = None,
    release: Release | None = None,
) -> list[UserDataGroup]:
    """The launch templates of ``nodepool_doc`` on ``nodeclass_doc``, sorted by (capacity type, max pods, ...).

    ``claims``: the fleet-mode claims' launches; empty in karpenter mode. As Karpenter's resolver,
    templates are split by max pods, EFA count and reservation (one per reservation id), and by the
    tenancy / enclave the launch asks for.
    """
    nc = build(nodeclass_doc, EC2NodeClass, release=release)
    np = build(nodepool_doc, NodePool, release=release)
    info = cluster_info_from_mapping(dict(cluster), file=cluster_file, at="config.nodewright:cluster")
    fixed = nc.spec.kubelet.max_pods if nc.spec.kubelet is not None else None
    default_ct = capacity_type_for(np)

    members: dict[_GroupKey, set[ClaimLaunch]] = {}
    plain: tuple[int, str, str, bool, str, bool] = (0, "", "", False, "default", False)
    if claims:
        needs_catalog = fixed is None or any(c.efa for c in claims)
        cat = nodeclass_catalog(catalog, nc, settings) if needs_catalog else None
        for cl in claims:
            name = cl.instance_type
            efa = _efa_of(cat, name, catalog) if cat is not None and cl.efa else 0
            pods = fixed if fixed is not None or cat is None else _pods_of(cat, name, catalog)
            key = (
                cl.capacity_type,
                pods,
                efa,
                cl.reservation_id,
                cl.reservation_type,
                cl.interruptible,
                cl.tenancy,
                cl.enclave,
            )
            members.setdefault(key, set()).add(cl)
    elif fixed is not None:
        members[(default_ct, fixed, *plain)] = set()
    else:
        types = compatible_instance_types(nodeclass_catalog(catalog, nc, settings), np)
        if not types:
            log.warning(
                "%s:%s: no instance type of %s is compatible with NodePool %r; its launch template uses "
                "max-pods %d",
                nodepool_doc.file,
                nodepool_doc.at("spec.template.spec.requirements"),
                catalog,
                np.name,
                FALLBACK_MAX_PODS,
            )
            members[(default_ct, FALLBACK_MAX_PODS, *plain)] = set()
        for it in types:
            members.setdefault((default_ct, int(it.max_pods), *plain), set()).add(
                ClaimLaunch(instance_type=it.name, capacity_type=default_ct)
            )

    out: list[UserDataGroup] = []
    for key, launches in sorted(members.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0, *kv[0][2:])):
        ct, pods, efa, reservation, reservation_type, interruptible, tenancy, enclave = key
        max_pods = int(pods) if pods is not None else FALLBACK_MAX_PODS
        try:
            family, options = launch_options(nc, np, info, max_pods=max_pods, capacity_type=ct)
            text = render_family(family, options).text
            spec = launch_template_spec(
                nc,
                cluster=info,
                nodepool=np.name,
                user_data=text,
                capacity_type=ct,
                identity={
                    "maxPods": max_pods,
                    "taints": [t.to_string() for t in options.taints],
                    "kubelet": options.kubelet.to_json() if options.kubelet else {},
                    "customUserData": options.custom_user_data,
                },
                security_group_ids=security_group_ids,
                efa_count=efa,
                enclave=enclave,
                tenancy=tenancy,
                capacity_reservation_id=reservation or None,
                capacity_reservation_type=reservation_type or None,
                capacity_reservation_interruptible=interruptible,
            )
        except UserDataError as exc:
            on_nodeclass = exc.path.startswith("spec.")
            raise InputError(
                exc.message,
                file=nodeclass_doc.file if on_nodeclass else cluster_file,
                path=nodeclass_doc.at(exc.path) if on_nodeclass else f"config.nodewright:cluster.{exc.path}",
            ) from None
        out.append(
            UserDataGroup(
                text=text,
                max_pods=max_pods,
                capacity_type=ct,
                instance_types=tuple(sorted({cl.instance_type for cl in launches})),
                efa_count=efa,
                reservation_id=reservation,
                tenancy=tenancy,
                enclave=enclave,
                claims=tuple(sorted(launches)) if claims else (),
                spec=spec,
            )
        )
    return out


def _efa_of(cat: Catalog, name: str, spec: str) -> int:
    it = cat.get(name)
    if it is None:
        raise InputError(f'instance type "{name}" of a claim is not in the catalog; re-run plan', file=spec)
    return instance_type_efa_count(it.capacity)


def _pods_of(cat: Catalog, name: str, spec: str) -> int:
    it = cat.get(name)
    if it is None:
        raise InputError(f'instance type "{name}" of a claim is not in the catalog; re-run plan', file=spec)
    return int(it.max_pods)
