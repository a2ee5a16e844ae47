"""Pure planning for the Pulumi program: stack config + documents -> what each component declares.

Boundary: no ``pulumi`` import, so the CLI and tests can call it; ``__main__.py`` turns a
:class:`StackPlan` into components. It reads the stack's files with the core loaders, stamps each
NodePool with :func:`nodewright.drift.nodepool_hash.nodepool_hash`, groups launch templates by
distinct user data (Karpenter renders one per max-pods group and NodePool), reads the reviewed
claims file (fleet mode) and derives per-pool registration health from a cluster state.
Nothing here is computed non-deterministically: the same files give the same plan.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from components import families
from nodewright import labels
from nodewright.api.documents import Document, load_documents
from nodewright.errors import Collector, InputError
from nodewright.userdata.launch_template import EFA_RESOURCE, LaunchTemplateSpec

log = logging.getLogger("nodewright")

MODES: Final = ("karpenter", "fleet")
CLAIMS_API_VERSION: Final = "nodewright.dev/v1alpha1"
CLAIMS_KIND: Final = "NodeClaimPlan"


@dataclass(frozen=True, kw_only=True)
class ClusterSettings:
    """``nodewright:cluster`` stack config (same fields as ``render userdata --cluster-info``)."""

    cluster_name: str
    cluster_endpoint: str
    ca_bundle: str
    cluster_cidr: str = ""
    cluster_dns: str = ""
    ip_family: str = "ipv4"

    def as_mapping(self) -> dict[str, str]:
        return {
            "clusterName": self.cluster_name,
            "clusterEndpoint": self.cluster_endpoint,
            "caBundle": self.ca_bundle,
            "clusterCIDR": self.cluster_cidr,
            "clusterDNS": self.cluster_dns,
            "ipFamily": self.ip_family,
        }


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The stack config nodewright reads (``nodewright:<key>``)."""

    stack: str
    mode: str
    files: tuple[str, ...]
    cluster: ClusterSettings
    kubernetes_version: str = "1.31"
    cluster_state: str | None = None
    claims: str | None = None
    subnets: Mapping[str, str] = field(default_factory=dict)
    security_groups: tuple[str, ...] = ()
    launch_templates: bool = True
    osc_format: str = "cloud-init"
    osc_namespace: str = "kube-system"
    tags: Mapping[str, str] = field(default_factory=dict)
    catalog: str = "aws:us-east-1"


@dataclass(frozen=True, kw_only=True)
class LaunchTemplatePlan:
    """One launch template: a distinct user data (max-pods group) for one NodePool on one NodeClass."""

    key: str  # stable suffix of the resource name
    nodepool: str
    nodeclass: str
    family: str
    user_data: str  # decoded, exactly nodewright.userdata's render
    max_pods: int
    capacity_type: str
    instance_types: tuple[str, ...]
    spec: LaunchTemplateSpec | None = None  # what Karpenter's provider would put in the template
    efa_count: int = 0


@dataclass(frozen=True, kw_only=True)
class NodeClassPlan:
    name: str
    body: Mapping[str, Any]
    family: str
    ami: families.AmiSource
    launch_templates: tuple[LaunchTemplatePlan, ...]


@dataclass(frozen=True, kw_only=True)
class PoolHealth:
    status: str = "Unknown"
    reason: str = ""
    verified: bool = False
    changed: bool = True
    node_class: str = ""

    def as_mapping(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "verified": self.verified,
            "changed": self.changed,
            "nodeClass": self.node_class,
        }


@dataclass(frozen=True, kw_only=True)
class NodePoolPlan:
    name: str
    body: Mapping[str, Any]  # the CR with hash annotations stamped
    nodeclass: str
    hash: str
    health: PoolHealth


@dataclass(frozen=True, kw_only=True)
class ClaimPlan:
    name: str
    nodepool: str
    nodeclass: str
    instance_type: str
    zone: str
    capacity_type: str
    nodepool_hash: str
    launch_template: str  # LaunchTemplatePlan.key
    labels: Mapping[str, str]


@dataclass(frozen=True, kw_only=True)
class OscPlan:
    name: str
    secret: Mapping[str, Any]  # the v1 Secret manifest (base64 data)


@dataclass(frozen=True, kw_only=True)
class StackPlan:
    settings: Settings
    nodeclasses: tuple[NodeClassPlan, ...]
    nodepools: tuple[NodePoolPlan, ...]
    claims: tuple[ClaimPlan, ...]
    oscs: tuple[OscPlan, ...]


# -- settings ------------------------------------------------------------------------------------


def _json(value: str | None, *, key: str, default: Any) -> Any:
    if value is None or value == "":
        return default
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def read_settings(get: Mapping[str, str | None], *, stack: str) -> Settings:
    """Settings from flattened stack config (``key`` -> string, as ``pulumi.Config().get`` gives)."""
    c = Collector(f"Pulumi.{stack}.yaml")
    mode = get.get("mode") or "karpenter"
    if mode not in MODES:
        c.add("config.nodewright:mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
    files = _json(get.get("files"), key="files", default=[])
    if isinstance(files, str):
        files = [files]
    if not isinstance(files, list) or not files:
        c.add(
            "config.nodewright:files", "list the NodePool/EC2NodeClass/OperatingSystemConfig files to deploy"
        )
        files = []
    cl = _json(get.get("cluster"), key="cluster", default={})
    if not isinstance(cl, Mapping):
        cl = {}
    for k in ("clusterName", "clusterEndpoint", "caBundle"):
        if not cl.get(k):
            c.add(
                f"config.nodewright:cluster.{k}",
                "required (the same fields as render userdata --cluster-info)",
            )
    subnets = _json(get.get("subnets"), key="subnets", default={})
    sgs = _json(get.get("securityGroups"), key="securityGroups", default=[])
    tags = _json(get.get("tags"), key="tags", default={})
    c.raise_if_any()
    lt = get.get("launchTemplates")
    return Settings(
        stack=stack,
        mode=mode,
        files=tuple(str(f) for f in files),
        cluster=ClusterSettings(
            cluster_name=str(cl["clusterName"]),
            cluster_endpoint=str(cl["clusterEndpoint"]),
            ca_bundle=str(cl["caBundle"]),
            cluster_cidr=str(cl.get("clusterCIDR", "")),
            cluster_dns=str(cl.get("clusterDNS", "")),
            ip_family=str(cl.get("ipFamily", "ipv4")),
        ),
        kubernetes_version=str(get.get("kubernetesVersion") or "1.31"),
        cluster_state=get.get("clusterState") or None,
        claims=get.get("claims") or None,
        subnets={str(k): str(v) for k, v in subnets.items()} if isinstance(subnets, Mapping) else {},
        security_groups=tuple(str(s) for s in sgs) if isinstance(sgs, list) else (),
        launch_templates=(lt or "true").lower() != "false",
        osc_format=get.get("oscFormat") or "cloud-init",
        osc_namespace=get.get("oscNamespace") or "kube-system",
        tags={str(k): str(v) for k, v in tags.items()} if isinstance(tags, Mapping) else {},
        catalog=get.get("catalog") or "aws:us-east-1",
    )


# -- documents -----------------------------------------------------------------------------------


def _by_kind(docs: Sequence[Document], kind: str) -> list[Document]:
    return [d for d in docs if d.kind == kind]


def _stamp(body: Mapping[str, Any], pool_hash: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(body))
    out.pop("status", None)
    meta = out.setdefault("metadata", {})
    for k in ("resourceVersion", "uid", "generation", "creationTimestamp", "managedFields"):
        meta.pop(k, None)
    ann = dict(meta.get("annotations") or {})
    ann.setdefault(labels.NODEPOOL_HASH, pool_hash)
    ann.setdefault(labels.NODEPOOL_HASH_VERSION, labels.NODEPOOL_HASH_VERSION_VALUE)
    meta["annotations"] = ann
    return out


def nodepool_hash(body: Mapping[str, Any]) -> str:
    from nodewright.drift.nodepool_hash import nodepool_hash as _hash

    return _hash(body, crd_defaults=True)


def lt_key(pool: str, *, max_pods: int, capacity_type: str | None, fixed: bool, efa_count: int = 0) -> str:
    """Stable launch-template key: the pool, the capacity type (fleet), the max-pods group and the
    EFA interface count (fleet claims requesting EFA).

    Names do not depend on the user data's bytes, so editing a NodeClass updates the launch
    template in place instead of replacing it; ``fixed`` (``spec.kubelet.maxPods``) drops the group.
    """
    parts = [pool] + ([capacity_type] if capacity_type else []) + ([] if fixed else [f"pods{max_pods}"])
    parts += [f"efa{efa_count}"] if efa_count else []
    return "-".join(parts)


def _requests_efa(claim: Mapping[str, Any]) -> bool:
    requests = claim.get("requests")
    return isinstance(requests, Mapping) and EFA_RESOURCE in requests


def read_claims(path: Path) -> list[dict[str, Any]]:
    """The ``nodeClaims`` of a claims file written by ``nodewright plan --write`` (docs/pulumi.md)."""
    if not path.is_file():
        raise InputError(
            "fleet mode needs the reviewed claims file; run `nodewright plan ... --write` and commit it",
            file=str(path),
        )
    docs = load_documents([path])
    c = Collector(str(path))
    claims: list[dict[str, Any]] = []
    for d in docs:
        if d.kind != CLAIMS_KIND:
            c.add(d.path or "kind", f"expected kind {CLAIMS_KIND} ({CLAIMS_API_VERSION}), got {d.kind!r}")
            continue
        for i, raw in enumerate(d.body.get("nodeClaims") or []):
            where = d.at(f"nodeClaims[{i}]")
            if not isinstance(raw, Mapping):
                c.add(where, "must be a mapping")
                continue
            launch_raw = raw.get("launch")
            launch: Mapping[str, Any] = launch_raw if isinstance(launch_raw, Mapping) else {}
            for k, v in (("name", raw.get("name")), ("nodePool", raw.get("nodePool"))):
                if not v:
                    c.add(f"{where}.{k}", "required")
            for k in ("instanceType", "zone", "capacityType"):
                if not launch.get(k):
                    c.add(f"{where}.launch.{k}", "required")
            claims.append(dict(raw))
    c.raise_if_any()
    return claims


def build_plan(settings: Settings, *, base_dir: Path) -> StackPlan:
    """Everything the program declares, from the stack's files (paths relative to ``base_dir``)."""
    docs = load_documents([base_dir / f for f in settings.files])
    c = Collector(f"Pulumi.{settings.stack}.yaml")
    nodeclass_docs = {d.name: d for d in _by_kind(docs, "EC2NodeClass")}
    pool_docs = _by_kind(docs, "NodePool")
    health = pool_health(settings, base_dir=base_dir, pools=pool_docs)
    claims_raw: list[dict[str, Any]] = []
    if settings.mode == "fleet":
        claims_raw = read_claims(base_dir / (settings.claims or f"stacks/claims-{settings.stack}.yaml"))

    pools: list[NodePoolPlan] = []
    pool_doc_by_name = {d.name: d for d in pool_docs}
    for d in pool_docs:
        ref = d.body.get("spec", {}).get("template", {}).get("spec", {}).get("nodeClassRef", {}) or {}
        nc_name = str(ref.get("name", ""))
        if nc_name not in nodeclass_docs:
            c.add(
                f"{d.file}:{d.at('spec.template.spec.nodeClassRef.name')}",
                f"no EC2NodeClass {nc_name!r} in the stack's files",
            )
        h = nodepool_hash(d.body)
        pools.append(
            NodePoolPlan(
                name=d.name,
                body=_stamp(d.body, h),
                nodeclass=nc_name,
                hash=h,
                health=health.get(d.name, PoolHealth(node_class=nc_name, changed=bool(health))),
            )
        )
    c.raise_if_any()

    # (instance type, capacity type) each pool's launch templates must cover: the claims' (fleet) or
    # none (karpenter: the catalog's compatible types, see components/userdata_adapter.py).
    claims_by_pool: dict[str, set[tuple[str, str, bool]]] = {}
    for cl in claims_raw:
        launch = cl["launch"]
        claims_by_pool.setdefault(str(cl["nodePool"]), set()).add(
            (str(launch["instanceType"]), str(launch["capacityType"]), _requests_efa(cl))
        )

    from components.userdata_adapter import render_groups

    nodeclasses: list[NodeClassPlan] = []
    lt_for: dict[tuple[str, str, str, bool], str] = {}
    for nc_name, nd in sorted(nodeclass_docs.items()):
        family = families.family_of_nodeclass(nd.body)
        fixed = bool((nd.body.get("spec", {}).get("kubelet") or {}).get("maxPods"))
        lts: dict[str, LaunchTemplatePlan] = {}
        for pool in sorted((p for p in pools if p.nodeclass == nc_name), key=lambda p: p.name):
            pool_claims = sorted(claims_by_pool.get(pool.name, set()))
            groups = render_groups(
                nd,
                pool_doc_by_name[pool.name],
                settings.cluster.as_mapping(),
                cluster_file=f"Pulumi.{settings.stack}.yaml",
                claims=pool_claims,
                catalog=settings.catalog,
                security_group_ids=settings.security_groups,
            )
            for g in groups:
                key = lt_key(
                    pool.name,
                    max_pods=g.max_pods,
                    capacity_type=g.capacity_type if pool_claims else None,
                    fixed=fixed,
                    efa_count=g.efa_count,
                )
                lts[key] = LaunchTemplatePlan(
                    key=key,
                    nodepool=pool.name,
                    nodeclass=nc_name,
                    family=family,
                    user_data=g.text,
                    max_pods=g.max_pods,
                    capacity_type=g.capacity_type,
                    instance_types=g.instance_types,
                    spec=g.spec,
                    efa_count=g.efa_count,
                )
                for it in g.instance_types:
                    if g.efa_count:  # groups sort by EFA count: this overrides the no-EFA fallback
                        lt_for[(pool.name, it, g.capacity_type, True)] = key
                    else:  # a claim requesting EFA on a type without any uses the plain template
                        lt_for[(pool.name, it, g.capacity_type, False)] = key
                        lt_for.setdefault((pool.name, it, g.capacity_type, True), key)
        nodeclasses.append(
            NodeClassPlan(
                name=nc_name,
                body=nd.body,
                family=family,
                ami=families.ami_source(
                    nd.body,
                    pools=[p.body for p in pools if p.nodeclass == nc_name],
                    kubernetes_version=settings.kubernetes_version,
                ),
                launch_templates=tuple(
                    sorted(lts.values(), key=lambda lt: (lt.nodepool, lt.capacity_type, lt.max_pods, lt.key))
                ),
            )
        )

    pool_by_name = {p.name: p for p in pools}
    claims: list[ClaimPlan] = []
    cc = Collector(settings.claims or f"stacks/claims-{settings.stack}.yaml")
    for i, cl in enumerate(claims_raw):
        found = pool_by_name.get(str(cl["nodePool"]))
        if found is None:
            cc.add(
                f"nodeClaims[{i}].nodePool",
                f"no NodePool {cl['nodePool']!r} in the stack's files; re-run plan",
            )
            continue
        pool = found
        it = str(cl["launch"]["instanceType"])
        zone = str(cl["launch"]["zone"])
        if zone not in settings.subnets:
            cc.add(
                f"nodeClaims[{i}].launch.zone", f"no subnet for zone {zone!r} in config nodewright:subnets"
            )
        claims.append(
            ClaimPlan(
                name=str(cl["name"]),
                nodepool=pool.name,
                nodeclass=str(cl.get("nodeClass") or pool.nodeclass),
                instance_type=it,
                zone=zone,
                capacity_type=str(cl["launch"]["capacityType"]),
                nodepool_hash=str(cl.get("nodePoolHash") or pool.hash),
                launch_template=lt_for[(pool.name, it, str(cl["launch"]["capacityType"]), _requests_efa(cl))],
                labels={str(k): str(v) for k, v in (cl.get("labels") or {}).items()},
            )
        )
    cc.raise_if_any()
    claims.sort(key=lambda x: x.name)

    return StackPlan(
        settings=settings,
        nodeclasses=tuple(nodeclasses),
        nodepools=tuple(sorted(pools, key=lambda p: p.name)),
        claims=tuple(claims),
        oscs=tuple(osc_plans(docs, settings)),
    )


def osc_plans(docs: Sequence[Document], settings: Settings) -> list[OscPlan]:
    osc_docs = [d for d in docs if d.kind == "OperatingSystemConfig"]
    if not osc_docs:
        return []
    from nodewright.osc.loading import load_osc_documents
    from nodewright.osc.render import render_osc
    from nodewright.osc.result import result_secret

    out: list[OscPlan] = []
    for loaded in load_osc_documents([d for d in docs if d.kind in ("OperatingSystemConfig", "Secret")]):
        result = render_osc(loaded, settings.osc_format)  # type: ignore[arg-type]
        secret = result_secret(result, namespace=settings.osc_namespace)
        out.append(OscPlan(name=result.name, secret=secret))
    return sorted(out, key=lambda o: o.name)


def pool_health(settings: Settings, *, base_dir: Path, pools: Sequence[Document]) -> dict[str, PoolHealth]:
    """Per NodePool: registration health and verification of its pair, from the cluster state (if any).

    ``changed`` is true when the branch's pool is new or hashes differently from the live one, so
    the ``nodepool-pair-health`` advisory only fires on a change (issue 7).
    """
    if not settings.cluster_state:
        return {}
    from nodewright.health import nodepool_health

    path = base_dir / settings.cluster_state
    report = nodepool_health(path)
    live = {d.name: d.body for d in load_documents([path]) if d.kind == "NodePool"}
    out: dict[str, PoolHealth] = {}
    for d in pools:
        ref = d.body.get("spec", {}).get("template", {}).get("spec", {}).get("nodeClassRef", {}) or {}
        live_body = live.get(d.name)
        live_hash = ((live_body or {}).get("metadata", {}).get("annotations") or {}).get(labels.NODEPOOL_HASH)
        changed = live_body is None or live_hash != nodepool_hash(d.body)
        h = report.pool(d.name)
        if h is None:
            out[d.name] = PoolHealth(node_class=str(ref.get("name", "")), changed=changed)
            continue
        out[d.name] = PoolHealth(
            status={"True": "Healthy", "False": "Unhealthy"}.get(h.condition.status, str(h.tracker_status)),
            reason=str(h.condition.reason or ""),
            verified=bool(h.verified),
            changed=changed,
            node_class=str(h.nodeclass or ref.get("name", "")),
        )
    return out


def dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False)
