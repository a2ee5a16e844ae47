"""Drift rollouts from the disruption simulation: one answer to "how does this roll".

``nodewright drift`` and the preview's drift section ask :func:`drift_rollout_files`; the preview's
cost asks :func:`forecast_inputs` for the same forecast inputs. The drifted NodeClaims of a
:class:`~nodewright.drift.DriftReport` are marked ``Drifted`` and Karpenter v1.14.1's disruption
controller (:func:`nodewright.disruption.forecast`) runs the methods that roll them, in production
order (kubernetes-sigs/karpenter ``pkg/controllers/disruption/controller.go``): emptiness (drifted
nodes only: reason ``Empty``, its own budgets), static drift, drift (``drift.go``: oldest
``Drifted`` first, empty candidates before the others, one command per reconcile, every
replacement must schedule or the node is skipped with upstream's message). A *wave* is what can be
in flight together: commands run without completing until a reconcile yields nothing (the budgets
count the nodes already disrupting), then they all complete and the next wave starts.

Per NodePool the rollout then says the order nodes roll in (wave, method, the budget reason they
count against), how many roll empty, the last wave, and the drifted nodes that do not roll with
Karpenter's reason; ``allowedPerWave``, ``blocked``, the windows, ``static``/``headroom`` keep
their budget meaning (:mod:`nodewright.drift.rollout`).

Scope and bound: the simulation covers the NodePools with a drifted NodeClaim: their NodeClaims,
Nodes and pods, and the pending pods (every NodePool stays a template for replacements; the
other pools' nodes are left out, so a pod that only fits there reads as not scheduling). It runs
when those pools hold at most :data:`SIMULATION_MAX_NODECLAIMS` NodeClaims and the state lists
their Nodes (a NodeClaim without its Node is no disruption candidate; a state of NodeClaims only
says nothing about them); otherwise the rollout stays budget arithmetic, said in a note. Pods are
optional: a node without pods is empty. Boundary: pure over loaded objects, except
:func:`drift_rollout_files`, which reads files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from nodewright.drift import DriftReport, drift_impact_files
from nodewright.drift.detect import DefaultsMode
from nodewright.drift.rollout import NotRolled, RollStep

if TYPE_CHECKING:
    from nodewright.api.karpenter import NodeClaim, NodePool
    from nodewright.cluster.state import ClusterState
    from nodewright.crd import Release
    from nodewright.disruption.result import DisruptionForecast
    from nodewright.scheduling.plan import CatalogFor
    from nodewright.settings import KarpenterSettings

SIMULATION_MAX_NODECLAIMS: Final = 100
"""Above this many NodeClaims in the drifted NodePools, rollouts are budget arithmetic. The
simulation runs a scheduling round over those pools per drifted node it tries: 100 drifted
NodeClaims with 2 pods each cost about 2 CPU s, 200 about 7 s (it grows with the square)."""
NOTES_SHOWN: Final = 5
"""Drifted nodes that do not roll, named one per note per NodePool; the rest are counted."""

ARITHMETIC_NOTE: Final = (
    "rollout waves are budget arithmetic (ceil(drifted / allowedPerWave)): the drifted NodePools have "
    f"more than {SIMULATION_MAX_NODECLAIMS} NodeClaims, the disruption simulation (empty nodes first, "
    "replacements that must schedule) runs up to that size"
)
NO_NODES_NOTE: Final = (
    "rollout waves are budget arithmetic (ceil(drifted / allowedPerWave)): the state lists no Node of the "
    "drifted NodePools, and the disruption simulation disrupts nodes (capture Nodes and Pods too, e.g. "
    "`nodewright cluster snapshot`)"
)


def forecast_inputs(
    *,
    state: ClusterState,
    nodepools: Sequence[NodePool],
    nodeclasses: Sequence[Any],
    catalog: str,
    settings: KarpenterSettings,
    drifted: Collection[str],
) -> tuple[list[NodePool], ClusterState, CatalogFor]:
    """What a forecast of the branch over the cluster starts from: the branch's NodePools then the
    cluster's it does not declare (they stay as they are), the state with ``Drifted`` only on the
    NodeClaims the branch drifts (Karpenter's drift controller clears it from the others), and the
    instance types per NodePool's EC2NodeClass (the branch's over the cluster's)."""
    from nodewright.userdata import pool_catalogs

    branch = {np.name for np in nodepools}
    pools = [*nodepools, *(np for np in state.nodepools if np.name not in branch)]
    classes = {nc.name: nc for nc in state.nodeclasses}
    classes.update({nc.name: nc for nc in nodeclasses})
    wanted = set(drifted)
    claims = tuple(c if c.metadata.name in wanted else _undrifted(c) for c in state.nodeclaims)
    cluster = dataclasses.replace(state, nodeclaims=claims, _node_index={})
    return pools, cluster, pool_catalogs(catalog, classes, settings)


def _undrifted(claim: NodeClaim) -> NodeClaim:
    if claim.condition("Drifted") is None:
        return claim
    conds = [c for c in claim.status.conditions if c.type != "Drifted"]
    return claim.model_copy(update={"status": claim.status.model_copy(update={"conditions": conds})})


def simulate_rollouts(
    report: DriftReport,
    *,
    state: ClusterState,
    nodepools: Sequence[NodePool],
    nodeclasses: Sequence[Any],
    catalog: str,
    settings: KarpenterSettings,
    at: datetime | None = None,
) -> DriftReport:
    """``report`` with each drifted NodePool's rollout from the simulation (see the module
    docstring); unchanged when nothing drifts, with a note above the size bound."""
    drifted = [d.node_claim for d in report.drifted]
    if not drifted:
        return report
    if simulated_size(report) > SIMULATION_MAX_NODECLAIMS:
        return dataclasses.replace(report, notes=(*report.notes, ARITHMETIC_NOTE))
    view = _drifted_pools_only(state, {p.name for p in report.pools if p.replaced})
    if not view.nodes:
        return dataclasses.replace(report, notes=(*report.notes, NO_NODES_NOTE))
    from nodewright.disruption.loop import forecast

    when = at or report.at or datetime.now(UTC)
    pools, cluster, catalog_for = forecast_inputs(
        state=view,
        nodepools=nodepools,
        nodeclasses=nodeclasses,
        catalog=catalog,
        settings=settings,
        drifted=drifted,
    )
    result = forecast(
        nodepools=pools,
        cluster=cluster,
        catalog_for=catalog_for,
        settings=settings,
        at=when,
        drifted=drifted,
        scope="drift",
        waves=True,
        max_rounds=len(drifted) + 1,  # every reconcile but a wave's last disrupts a drifted node
    )
    return _with_rollouts(report, result)


def simulated_size(report: DriftReport) -> int:
    """The NodeClaims of the NodePools with a drifted NodeClaim: what the simulation covers."""
    return sum(p.node_claims for p in report.pools if p.replaced)


def _drifted_pools_only(state: ClusterState, pools: Collection[str]) -> ClusterState:
    """``state`` with the NodeClaims and Nodes of ``pools`` only, the pods bound to those Nodes and
    the pods bound to none (pending): every simulation places the pending pods, as upstream's."""
    from nodewright import labels

    claims = tuple(c for c in state.nodeclaims if c.metadata.labels.get(labels.NODEPOOL) in pools)
    names = {c.status.node_name for c in claims if c.status.node_name}
    nodes = tuple(
        n for n in state.nodes if n.metadata.name in names or n.metadata.labels.get(labels.NODEPOOL) in pools
    )
    kept = {n.metadata.name for n in nodes}
    pods = tuple(p for p in state.pods if not p.spec.node_name or p.spec.node_name in kept)
    return dataclasses.replace(state, nodeclaims=claims, nodes=nodes, pods=pods, _node_index={})


def _steps(result: DisruptionForecast) -> dict[str, RollStep]:
    steps: dict[str, RollStep] = {}
    for cmd in result.commands:
        single = len(cmd.candidates) == 1
        for c in cmd.candidates:
            name = str(c["nodeClaim"])
            steps[name] = RollStep(
                node_claim=name,
                wave=cmd.wave or 1,
                method=cmd.method,
                reason=cmd.reason,
                decision=cmd.decision,
                pods_moved=cmd.pods_moved if single else 0,
                replacements=len(cmd.replacements) if single else 0,
            )
    return steps


def _with_rollouts(report: DriftReport, result: DisruptionForecast) -> DriftReport:
    steps = _steps(result)
    held = {b.node_claim: b.reason for b in result.blocked}
    by_pool: dict[str, list[str]] = {}
    for d in report.drifted:
        by_pool.setdefault(d.node_pool, []).append(d.node_claim)
    pools = []
    for p in report.pools:
        mine = by_pool.get(p.name)
        if p.rollout is None or not mine:
            pools.append(p)
            continue
        r = p.rollout
        order = tuple(sorted((steps[n] for n in mine if n in steps), key=_position(steps)))
        missing = [n for n in mine if n not in steps]
        not_rolled = tuple(
            NotRolled(node_claim=n, reason=_why(n, held, r.allowed_per_wave == 0, result.stopped))
            for n in missing
        )
        notes = [f"{n.node_claim} does not roll: {n.reason}" for n in not_rolled[:NOTES_SHOWN]]
        if len(not_rolled) > NOTES_SHOWN:
            notes.append(
                f"and {len(not_rolled) - NOTES_SHOWN} more drifted node(s) do not roll (see notRolled)"
            )
        rollout = dataclasses.replace(
            r, simulated=True, order=order, not_rolled=not_rolled, notes=(*r.notes, *notes)
        )
        pools.append(dataclasses.replace(p, rollout=rollout))
    notes = list(report.notes)
    if result.stopped != "quiet":
        notes.append(f"the rollout simulation stopped at its limit of {result.rounds} reconciles")
    return dataclasses.replace(report, pools=tuple(pools), notes=tuple(notes))


def _position(steps: Mapping[str, RollStep]) -> Any:
    index = {name: i for i, name in enumerate(steps)}
    return lambda s: (s.wave, index[s.node_claim])


def _why(claim: str, held: Mapping[str, str], budget_zero: bool, stopped: str) -> str:
    if claim in held:
        return held[claim]
    if budget_zero:
        return "the disruption budgets allow no drift disruption now"
    if stopped != "quiet":
        return "the simulation stopped before it"
    return "not a disruption candidate in the simulation"


def drift_rollout_files(
    files: Iterable[str | Path],
    cluster: Any,
    catalog: Any = None,
    *,
    sim_catalog: str | None = None,
    settings: KarpenterSettings | None = None,
    defaults: DefaultsMode = "auto",
    ca_bundle: str | None = None,
    at: datetime | None = None,
    release: Release,
    karpenter: Mapping[str, Any] | None = None,
) -> DriftReport:
    """:func:`nodewright.drift.drift_impact_files` with the rollouts simulated (what ``nodewright
    drift`` and the preview's drift section print).

    ``catalog``: as for drift (the InstanceTypeNotFound check; None skips it). ``sim_catalog``: the
    instance types the replacements are simulated with (default ``catalog`` when it is a spec,
    else the default catalog). ``cluster``: a state file path (read once: the drift reads it raw;
    the simulation builds its objects only under the size bound) or a ClusterState.
    """
    files = list(files)
    report = drift_impact_files(
        files,
        cluster,
        catalog,
        defaults=defaults,
        ca_bundle=ca_bundle,
        at=at,
        release=release,
        karpenter=karpenter,
    )
    if not report.drifted or simulated_size(report) > SIMULATION_MAX_NODECLAIMS:
        return simulate_rollouts(
            report, state=_no_state(), nodepools=(), nodeclasses=(), catalog="", settings=_settings(settings)
        )
    from nodewright.catalog.loader import DEFAULT_SPEC
    from nodewright.cluster import load_cluster
    from nodewright.drift.inputs import read_objects

    state = load_cluster(cluster, release=release) if isinstance(cluster, str | Path) else cluster
    objs = read_objects(files, release=release)
    spec = sim_catalog or (catalog if isinstance(catalog, str) else None) or DEFAULT_SPEC
    return simulate_rollouts(
        report,
        state=state,
        nodepools=objs.nodepools,
        nodeclasses=objs.nodeclasses,
        catalog=spec,
        settings=_settings(settings),
        at=report.at,
    )


def _settings(settings: KarpenterSettings | None) -> KarpenterSettings:
    from nodewright.settings import KarpenterSettings

    return settings or KarpenterSettings()


def _no_state() -> ClusterState:
    from nodewright.cluster.state import ClusterState

    return ClusterState()
