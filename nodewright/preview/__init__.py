"""The offline ``pulumi preview --policy-pack policies``: mock runtime + in-process policy pack.

Boundary: the only core package that imports ``pulumi`` (and ``pulumi_policy``). Public API:
:func:`preview` (what ``nodewright preview`` calls) -> :class:`PreviewResult` (a typed
:class:`~nodewright.preview.document.PreviewDocument`), :func:`~nodewright.preview.runner.load_stack`,
:func:`~nodewright.preview.runner.run_program`, :func:`~nodewright.preview.analyzer.analyze`,
:mod:`~nodewright.preview.report` renderers. Heavy imports happen inside :func:`preview`, so
importing this package (e.g. from the CLI) stays cheap.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nodewright.preview.document import PreviewDocument

if TYPE_CHECKING:
    from nodewright.crd import KarpenterChoice, Release

_progress = logging.getLogger("nodewright.progress")  # shown by the CLI on a terminal only


@dataclass(frozen=True, kw_only=True)
class PreviewResult:
    """The typed preview document and whether a mandatory policy was violated (exit 1)."""

    report: PreviewDocument
    mandatory: bool

    @property
    def document(self) -> dict[str, Any]:
        """The ``-o json`` document (``report.as_dict()``)."""
        return self.report.as_dict()


CONFIG_NAMESPACE = "nodewright"
"""The program reads ``pulumi.Config("nodewright")``: its keys are ``nodewright:<key>`` whatever the
project is called (a repository made by ``nodewright init DIR`` is named after DIR)."""


def _state(stack_config: Mapping[str, str], project: str, project_dir: Path, *, release: Release) -> Any:
    """The stack's ``clusterState`` (file or live), read once for drift and cost; None when unset."""
    spec = stack_config.get(f"{CONFIG_NAMESPACE}:clusterState")
    if not spec or not _files(stack_config, project):
        return None
    from nodewright.cluster import resolve_cluster

    return resolve_cluster(
        spec,
        base_dir=project_dir,
        kubeconfig=stack_config.get(f"{CONFIG_NAMESPACE}:kubeconfig") or None,
        context=stack_config.get(f"{CONFIG_NAMESPACE}:kubeContext") or None,
        release=release,
    )


def _drift(
    stack_config: Mapping[str, str],
    project: str,
    stack: str,
    project_dir: Path,
    state: Any,
    *,
    release: Release,
    karpenter: Mapping[str, Any],
    at: datetime | None = None,
) -> dict[str, Any] | None:
    """Drift impact of the stack's files against its ``clusterState`` (file or live), with the
    rollout waves of ``nodewright drift``'s simulation over the stack's catalog and settings."""
    spec = stack_config.get(f"{CONFIG_NAMESPACE}:clusterState")
    files = _files(stack_config, project)
    if state is None or not spec:
        return None
    from nodewright.disruption.rollout import drift_rollout_files
    from nodewright.stack.cost import project_catalog

    settings = stack_settings(stack_config, project, stack)
    report = drift_rollout_files(
        [project_dir / f for f in files],
        state,
        sim_catalog=project_catalog(settings, project_dir),
        settings=settings.karpenter,
        at=at,
        ca_bundle=_ca_bundle(stack_config, project),
        release=release,
        karpenter=karpenter,
    )
    out: dict[str, Any] = report.as_dict()
    out["clusterState"] = "live" if spec == "live" else spec
    return out


def stack_settings(stack_config: Mapping[str, str], project: str, stack: str) -> Any:
    """The stack's :class:`~nodewright.stack.Settings`, as the program reads them (``aws:region`` too)."""
    from nodewright.stack import read_settings

    prefix = f"{CONFIG_NAMESPACE}:"
    get: dict[str, str | None] = {
        k[len(prefix) :]: v for k, v in stack_config.items() if k.startswith(prefix)
    }
    get["aws:region"] = stack_config.get("aws:region")
    return read_settings(get, stack=stack)


def _cost(
    stack_config: Mapping[str, str],
    project: str,
    stack: str,
    project_dir: Path,
    state: Any,
    at: datetime | None = None,
    drift: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``cost``: the cluster's NodeClaims before and after convergence (:mod:`nodewright.stack.cost`),
    with the NodeClaims the drift section found drifted (detected once, at the same time)."""
    from nodewright.stack.cost import stack_cost

    settings = stack_settings(stack_config, project, stack)
    drifted = [str(d["nodeClaim"]) for d in drift["drifted"]] if drift else None
    return stack_cost(settings, base_dir=project_dir, state=state, at=at, drifted=drifted).as_dict()


def _files(stack_config: Mapping[str, str], project: str) -> list[str]:
    raw = stack_config.get(f"{CONFIG_NAMESPACE}:files")
    if not raw:
        return []
    files = json.loads(raw) if raw.startswith("[") else [raw]
    return [str(f) for f in files]


def _sources(stack_config: Mapping[str, str], project: str, project_dir: Path) -> dict[str, dict[str, str]]:
    """Where each object of the stack's files lives (for findings); empty when unreadable."""
    from nodewright.api.documents import load_documents
    from nodewright.errors import NodewrightError
    from nodewright.preview.findings import source_index

    try:
        docs = load_documents([project_dir / f for f in _files(stack_config, project)])
    except NodewrightError:  # the program itself reports bad files
        return {}
    return source_index(docs, project_dir)


def _ca_bundle(stack_config: Mapping[str, str], project: str) -> str | None:
    """The ``caBundle`` of the stack's ``nodewright:cluster`` config (part of the EC2NodeClass hash)."""
    cluster = stack_config.get(f"{CONFIG_NAMESPACE}:cluster")
    if not cluster:
        return None
    try:
        ca = json.loads(cluster).get("caBundle")
    except (ValueError, AttributeError):
        return None
    return str(ca) if ca else None


def _redactions(stack_config: Mapping[str, str], project: str, secret_keys: frozenset[str]) -> list[str]:
    out = [stack_config[k] for k in secret_keys if k in stack_config]
    ca = _ca_bundle(stack_config, project)
    if ca:
        out.append(ca)
    return out


UPDATE_POLICY = "karpenter-crd-update-valid"


def with_base(config: Mapping[str, Any] | None, base: Path) -> dict[str, Any]:
    """The policy config with the base preview given to the update policy (its level kept)."""
    out = dict(config or {})
    given = out.get(UPDATE_POLICY)
    entry: dict[str, Any] = dict(given) if isinstance(given, Mapping) else {}
    if isinstance(given, str):
        entry["enforcementLevel"] = given
    entry["base"] = str(base)
    out[UPDATE_POLICY] = entry
    return out


def preview(
    *,
    stack: str | None = None,
    stack_file: Path | None = None,
    policy_config: Mapping[str, Any] | None = None,
    cwd: Path | None = None,
    project_dir: Path | None = None,
    at: datetime | None = None,
    cluster_state: str | None = None,
    base: Path | None = None,
    karpenter: KarpenterChoice | None = None,
) -> PreviewResult:
    """Run the program of the stack offline, the policy pack on it, and build the report document.

    ``cluster_state`` overrides the stack's ``nodewright:clusterState`` (a file or ``live``);
    ``at`` is when scheduled disruption budgets are evaluated for the rollout waves; ``base`` (the
    base branch's ``-o json``) makes ``karpenter-crd-update-valid`` check each CR as an update of
    the base's. ``karpenter`` (the command line's release and settings) is resolved against the
    stack's ``nodewright:karpenterVersion`` / ``nodewright:karpenter`` (a flag and a stack naming
    different releases is a UsageError) and handed to the program as that config, so the program,
    the policy pack and the drift forecast all see one release and one set of settings.
    """
    from nodewright.preview.analyzer import analyze, has_mandatory
    from nodewright.preview.pack import pack_version
    from nodewright.preview.report import build_document
    from nodewright.preview.runner import load_stack, run_program

    st = load_stack(stack=stack, stack_file=stack_file, cwd=cwd, project_dir=project_dir)
    if cluster_state:
        st = replace(st, config={**st.config, f"{CONFIG_NAMESPACE}:clusterState": cluster_state})
    stack_st = st
    st, release, summary = _karpenter(stack_st, karpenter)
    # the cluster state first: the Karpenter settings a snapshot recorded from the running
    # controller apply beneath the flags, the environment and the stack (so the program's max-pods
    # groups, the drift and the cost all see the cluster's own settings)
    state = _state(st.config, st.project, st.project_dir, release=release)
    recorded = dict(getattr(state, "karpenter_settings", None) or {})
    if recorded:
        st, release, summary = _karpenter(stack_st, karpenter, snapshot=recorded)
    _progress.info("running the Pulumi program of stack %s offline", st.stack)
    run = run_program(st)
    if base is not None:
        policy_config = with_base(policy_config, base)
    violations = analyze(run.registrations, config=policy_config, version=pack_version(st.project_dir))
    _progress.info("forecasting drift and cost against the cluster state" if state else "forecasting cost")
    drift = _drift(
        st.config, st.project, st.stack, st.project_dir, state, at=at, release=release, karpenter=summary
    )
    cost = _cost(st.config, st.project, st.stack, st.project_dir, state, at=at, drift=drift)
    doc = build_document(
        run,
        violations,
        drift=drift,
        cost=cost,
        redact=_redactions(st.config, st.project, st.secret_keys),
        sources=_sources(st.config, st.project, st.project_dir),
        karpenter=summary,
    )
    return PreviewResult(report=doc, mandatory=has_mandatory(violations))


def _karpenter(
    st: Any, karpenter: KarpenterChoice | None, *, snapshot: Mapping[str, Any] | None = None
) -> tuple[Any, Release, dict[str, Any]]:
    """The stack config with the resolved Karpenter release and settings in it, the release, and
    the ``karpenter`` summary the document states."""
    from nodewright.crd import KarpenterChoice
    from nodewright.errors import InputError

    choice = karpenter or KarpenterChoice()
    file = str(st.stack_file or f"Pulumi.{st.stack}.yaml")
    key_version, key_settings = f"{CONFIG_NAMESPACE}:karpenterVersion", f"{CONFIG_NAMESPACE}:karpenter"
    try:
        release = choice.release(st.config.get(key_version) or None)
    except InputError as exc:
        if exc.file.startswith("config."):
            raise InputError(exc.message, file=file, path=exc.file) from exc
        raise
    raw = st.config.get(key_settings)
    stack_settings: Any = None
    if raw:
        try:
            stack_settings = json.loads(raw)
        except ValueError:
            stack_settings = raw
        if not isinstance(stack_settings, Mapping):
            raise InputError(
                "must be a map (featureGates, preferencePolicy, minValuesPolicy, ...)",
                file=file,
                path="config.nodewright:karpenter",
            )
    try:
        settings = choice.settings(stack=stack_settings, snapshot=snapshot, release=release)
    except InputError as exc:
        if exc.file.startswith("config."):
            raise InputError(exc.message, file=file, path=exc.file) from exc
        raise
    config = {
        **st.config,
        key_version: release.version,
        key_settings: json.dumps(settings.as_dict()),
    }
    return replace(st, config=config), release, {"version": release.version, **settings.as_dict()}


__all__ = ["PreviewDocument", "PreviewResult", "preview"]
