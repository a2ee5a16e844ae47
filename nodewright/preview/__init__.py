"""The offline ``pulumi preview --policy-pack policies``: mock runtime + in-process policy pack.

Boundary: the only core package that imports ``pulumi`` (and ``pulumi_policy``). Public API:
:func:`preview` (what ``nodewright preview`` calls), :func:`~nodewright.preview.runner.load_stack`,
:func:`~nodewright.preview.runner.run_program`, :func:`~nodewright.preview.analyzer.analyze`,
:mod:`~nodewright.preview.report` renderers. Heavy imports happen inside :func:`preview`, so
importing this package (e.g. from the CLI) stays cheap.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any


@dataclass(frozen=True, kw_only=True)
class PreviewResult:
    document: dict[str, Any]
    mandatory: bool


def _drift(
    stack_config: Mapping[str, str], project: str, project_dir: Path, *, at: datetime | None = None
) -> dict[str, Any] | None:
    """Drift impact (with rollout waves) of the stack's files against its ``clusterState`` (file or live)."""
    spec = stack_config.get(f"{project}:clusterState")
    files_raw = stack_config.get(f"{project}:files")
    if not spec or not files_raw:
        return None
    files = json.loads(files_raw) if files_raw.startswith("[") else [files_raw]
    from nodewright.cluster import resolve_cluster
    from nodewright.drift import drift_impact_files

    state = resolve_cluster(
        spec,
        base_dir=project_dir,
        kubeconfig=stack_config.get(f"{project}:kubeconfig") or None,
        context=stack_config.get(f"{project}:kubeContext") or None,
    )
    report = drift_impact_files(
        [project_dir / f for f in files], state, at=at, ca_bundle=_ca_bundle(stack_config, project)
    )
    out: dict[str, Any] = report.as_dict()
    out["clusterState"] = "live" if spec == "live" else spec
    return out


def _ca_bundle(stack_config: Mapping[str, str], project: str) -> str | None:
    """The ``caBundle`` of the stack's ``nodewright:cluster`` config (part of the EC2NodeClass hash)."""
    cluster = stack_config.get(f"{project}:cluster")
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


def preview(
    *,
    stack: str | None = None,
    stack_file: Path | None = None,
    policy_config: Mapping[str, Any] | None = None,
    cwd: Path | None = None,
    at: datetime | None = None,
    cluster_state: str | None = None,
) -> PreviewResult:
    """Run the program of the stack offline, the policy pack on it, and build the report document.

    ``cluster_state`` overrides the stack's ``nodewright:clusterState`` (a file or ``live``);
    ``at`` is when scheduled disruption budgets are evaluated for the rollout waves.
    """
    from nodewright.preview.analyzer import analyze, has_mandatory
    from nodewright.preview.pack import pack_version
    from nodewright.preview.report import build_document
    from nodewright.preview.runner import load_stack, run_program

    st = load_stack(stack=stack, stack_file=stack_file, cwd=cwd)
    if cluster_state:
        st = replace(st, config={**st.config, f"{st.project}:clusterState": cluster_state})
    run = run_program(st)
    violations = analyze(run.registrations, config=policy_config, version=pack_version(st.project_dir))
    drift = _drift(st.config, st.project, st.project_dir, at=at)
    doc = build_document(
        run, violations, drift=drift, redact=_redactions(st.config, st.project, st.secret_keys)
    )
    return PreviewResult(document=doc, mandatory=has_mandatory(violations))


__all__ = ["PreviewResult", "preview"]
