"""The stack plan: stack config + documents -> what each Pulumi component declares.

Boundary: no ``pulumi`` import, so the CLI and tests can call it; ``__main__.py`` turns a
:class:`~nodewright.stack.model.StackPlan` into components (``components/`` only adapt). It reads
the stack's files with the core loaders, stamps each NodePool with the hash an in-cluster
Karpenter computes (:func:`nodewright.drift.nodepoolhash.nodepool_hash`), groups launch templates
by distinct user data (Karpenter renders one per max-pods group and NodePool,
:mod:`nodewright.stack.launchtemplates`), reads the reviewed claims file in fleet mode
(:mod:`nodewright.scheduling.claimsfile`) and derives per-pool registration health from a cluster
state. Nothing here is computed non-deterministically: the same files give the same plan.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nodewright import crd, labels
from nodewright.api.amifamily import DEFAULT_METADATA_OPTIONS, ami_family
from nodewright.api.documents import Document, load_documents
from nodewright.api.loading import objects_from_documents
from nodewright.cluster import ClusterState, resolve_cluster
from nodewright.drift.inputs import as_documents, defaulted_nodepool_hash
from nodewright.errors import Collector
from nodewright.health import nodepool_health
from nodewright.osc.loading import load_osc_documents
from nodewright.osc.render import render_osc
from nodewright.osc.result import result_secret
from nodewright.scheduling.claimsfile import load_claims
from nodewright.stack.ami import ami_source, block_devices, metadata_options
from nodewright.stack.launchtemplates import ClaimLaunch, render_groups
from nodewright.stack.model import (
    ClaimPlan,
    LaunchTemplatePlan,
    NodeClassPlan,
    NodePoolPlan,
    OscPlan,
    PoolHealthView,
    Settings,
    StackPlan,
)

log = logging.getLogger("nodewright")


# -- documents -----------------------------------------------------------------------------------


def _stamp(body: Mapping[str, Any], pool_hash: str, release: crd.Release) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(body))
    out.pop("status", None)
    meta = out.setdefault("metadata", {})
    for k in ("resourceVersion", "uid", "generation", "creationTimestamp", "managedFields"):
        meta.pop(k, None)
    ann = dict(meta.get("annotations") or {})
    ann.setdefault(labels.NODEPOOL_HASH, pool_hash)
    ann.setdefault(labels.NODEPOOL_HASH_VERSION, release.nodepool_hash_version)
    meta["annotations"] = ann
    return out


def lt_key(pool: str, *, max_pods: int, capacity_type: str | None, fixed: bool, suffix: str = "") -> str:
    """Stable launch-template key: the pool, the capacity type (fleet), the max-pods group and the
    per-launch suffix of fleet claims (``-efa<N>``, ``-<reservation id>``, ``-dedicated``, ``-enclave``).

    Names do not depend on the user data's bytes, so editing a NodeClass updates the launch
    template in place instead of replacing it; ``fixed`` (``spec.kubelet.maxPods``) drops the group.
    """
    parts = [pool] + ([capacity_type] if capacity_type else []) + ([] if fixed else [f"pods{max_pods}"])
    return "-".join(parts) + suffix


def _nodeclass_ref(doc: Document) -> str:
    spec = ((doc.body.get("spec") or {}).get("template") or {}).get("spec") or {}
    return str((spec.get("nodeClassRef") or {}).get("name", ""))


def _shown(file: str, base_dir: Path) -> str:
    """A file as the user named it: relative to the repository when it is inside."""
    try:
        return str(Path(file).relative_to(base_dir))
    except ValueError:
        return file


def build_stack_plan(settings: Settings, *, base_dir: Path) -> StackPlan:
    """Everything the program declares, from the stack's files (paths relative to ``base_dir``).

    Every NodePool/EC2NodeClass goes through the one loading path (the CRDs of ``settings.release``,
    the release ``nodewright:karpenterVersion`` names): an object the cluster would reject stops the
    program with its file and field. CRs are declared as written; hashes (and their versions) are
    the release's, of the defaulted objects.
    """
    release = settings.release
    docs = load_documents([base_dir / f for f in settings.files])
    objs = objects_from_documents(docs, release=release)
    c = Collector(f"Pulumi.{settings.stack}.yaml")
    nodeclass_docs = {d.name: d for d in as_documents(objs.nodeclasses, as_written=True)}
    notes: list[str] = []
    # NodePools this Karpenter does not own (nodepool.IsManaged): no launch template, no claims
    for np in objs.nodepools:
        why = np.unmanaged_reason()
        if why is not None:
            notes.append(f"{_shown(np.origin_file, base_dir)}: NodePool {np.name!r} left out: {why}")
    pool_docs = as_documents([np for np in objs.nodepools if np.unmanaged_reason() is None], as_written=True)
    state = load_state(settings, base_dir=base_dir)
    if state is not None and state.empty:
        notes.append(state.empty_note())
    health = pool_health(state, pools=pool_docs, release=release)
    claims_raw: list[dict[str, Any]] = []
    claims_file = settings.claims or f"stacks/claims-{settings.stack}.yaml"
    if settings.mode == "fleet":
        claims_raw = load_claims(base_dir / claims_file, strategy=settings.plan_strategy)
        if not claims_raw:
            notes.append(
                f"{claims_file}: no NodeClaims: fleet mode declares no instance; "
                "run `nodewright plan ... --write` and commit the claims to launch capacity"
            )
    if not pool_docs:
        notes.append(
            f"no NodePool in the stack's files ({', '.join(settings.files)}): nothing provisions nodes"
        )
    referenced = {_nodeclass_ref(d) for d in pool_docs}
    for name, nd in sorted(nodeclass_docs.items()):
        if name not in referenced:
            notes.append(
                f"{_shown(nd.file, base_dir)}: EC2NodeClass {name!r} is referenced by no NodePool: "
                "no launch template is created for it"
            )

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
        h = defaulted_nodepool_hash(d.body, release=release)
        pools.append(
            NodePoolPlan(
                name=d.name,
                body=_stamp(d.body, h, release),
                nodeclass=nc_name,
                hash=h,
                health=health.get(d.name, PoolHealthView(node_class=nc_name, changed=bool(health))),
            )
        )
    c.raise_if_any()

    # the launches each pool's launch templates must cover: the claims' (fleet) or
    # none (karpenter: the catalog's compatible types, see nodewright.stack.launchtemplates).
    claims_by_pool: dict[str, set[ClaimLaunch]] = {}
    for cl in claims_raw:
        claims_by_pool.setdefault(str(cl["nodePool"]), set()).add(ClaimLaunch.of_claim(cl))

    nodeclasses: list[NodeClassPlan] = []
    lt_for: dict[tuple[str, ClaimLaunch], str] = {}
    for nc_name, nd in sorted(nodeclass_docs.items()):
        family = ami_family(nd.body.get("spec") or {})
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
                settings=settings.karpenter,
                release=release,
            )
            for g in groups:
                key = lt_key(
                    pool.name,
                    max_pods=g.max_pods,
                    capacity_type=g.capacity_type if pool_claims else None,
                    fixed=fixed,
                    suffix=g.key_suffix(),
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
                for launch in g.claims:
                    lt_for[(pool.name, launch)] = key
        nodeclasses.append(
            NodeClassPlan(
                name=nc_name,
                body=nd.body,
                family=family,
                ami=ami_source(
                    nd.body,
                    pools=[p.body for p in pools if p.nodeclass == nc_name],
                    kubernetes_version=settings.kubernetes_version,
                ),
                block_devices=block_devices(nd.body, family),
                metadata_options=metadata_options(nd.body),
                launch_templates=tuple(
                    sorted(lts.values(), key=lambda lt: (lt.nodepool, lt.capacity_type, lt.max_pods, lt.key))
                ),
            )
        )

    oscs = osc_plans(docs, settings)
    if not oscs:
        notes.append("no OperatingSystemConfig in the stack's files: no osc-result Secret is created")

    pool_by_name = {p.name: p for p in pools}
    metadata_by_nodeclass = {nc.name: nc.metadata_options for nc in nodeclasses}
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
                launch_template=lt_for[(pool.name, ClaimLaunch.of_claim(cl))],
                labels={str(k): str(v) for k, v in (cl.get("labels") or {}).items()},
                metadata_options=metadata_by_nodeclass.get(pool.nodeclass, DEFAULT_METADATA_OPTIONS),
            )
        )
    cc.raise_if_any()
    claims.sort(key=lambda x: x.name)

    return StackPlan(
        settings=settings,
        nodeclasses=tuple(nodeclasses),
        nodepools=tuple(sorted(pools, key=lambda p: p.name)),
        claims=tuple(claims),
        oscs=tuple(oscs),
        notes=tuple(notes),
    )


def osc_plans(docs: Sequence[Document], settings: Settings) -> list[OscPlan]:
    osc_docs = [d for d in docs if d.kind == "OperatingSystemConfig"]
    if not osc_docs:
        return []
    out: list[OscPlan] = []
    for loaded in load_osc_documents([d for d in docs if d.kind in ("OperatingSystemConfig", "Secret")]):
        result = render_osc(loaded, settings.osc_format)  # type: ignore[arg-type]
        secret = result_secret(result, namespace=settings.osc_namespace)
        out.append(OscPlan(name=result.name, secret=secret))
    return sorted(out, key=lambda o: o.name)


def load_state(settings: Settings, *, base_dir: Path) -> ClusterState | None:
    """The stack's ``clusterState``: a file (relative to ``base_dir``), ``live``, or None when unset."""
    if not settings.cluster_state:
        return None
    return resolve_cluster(
        settings.cluster_state,
        base_dir=base_dir,
        kubeconfig=settings.kubeconfig,
        context=settings.kube_context,
        release=settings.release,
    )


def pool_health(
    state: ClusterState | None, *, pools: Sequence[Document], release: crd.Release
) -> dict[str, PoolHealthView]:
    """Per NodePool: registration health and verification of its pair, from the cluster state (if any).

    ``changed`` is true when the branch's pool is new or hashes differently from the live one, so
    the ``nodepool-pair-health`` advisory only fires on a change.
    """
    if state is None:
        return {}
    report = nodepool_health(state)
    live = {p.metadata.name: dict(p.metadata.annotations or {}) for p in state.nodepools}
    out: dict[str, PoolHealthView] = {}
    for d in pools:
        live_ann = live.get(d.name)
        changed = live_ann is None or live_ann.get(labels.NODEPOOL_HASH) != defaulted_nodepool_hash(
            d.body, release=release
        )
        h = report.pool(d.name)
        if h is None:
            out[d.name] = PoolHealthView(node_class=_nodeclass_ref(d), changed=changed)
            continue
        out[d.name] = PoolHealthView(
            status={"True": "Healthy", "False": "Unhealthy"}.get(h.condition.status, str(h.tracker_status)),
            reason=str(h.condition.reason or ""),
            verified=bool(h.verified),
            changed=changed,
            node_class=str(h.nodeclass or _nodeclass_ref(d)),
        )
    return out
