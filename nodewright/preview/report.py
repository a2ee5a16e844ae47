"""The preview report: the JSON document of ``nodewright preview -o json``, its table and the
pull-request comment of ``-o markdown``.

Boundary: pure over a :class:`~nodewright.preview.runner.ProgramRun` and the analyzer's violations.
Secrets print as ``[secret]``; the only secret content shown is the user data of launch templates
(the reviewer must see what nodes boot with), and it is redacted of every known secret value (CA
bundle, ``secure:`` stack config) first. The user-data diff is against a *base* preview JSON
(``--base``: the same command run on the base branch), else the whole render is shown as new.
The pull-request comment (``-o markdown``) is :mod:`nodewright.preview.comment`; policy violations
are folded onto the user's files by :mod:`nodewright.preview.findings` (``findings`` in the JSON).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

from nodewright import labels, redact
from nodewright.policy.resources import LAUNCH_TEMPLATE, decode_user_data
from nodewright.preview.analyzer import Violation
from nodewright.preview.comment import GITHUB_COMMENT_LIMIT, markdown_sections, render_markdown
from nodewright.preview.findings import findings
from nodewright.preview.mocks import secret_paths, unwrap
from nodewright.preview.runner import ProgramRun
from nodewright.tables import format_table

REDACTED: Final = "[secret]"


def _parent_ref(parent_urn: str) -> str:
    if not parent_urn or "::" not in parent_urn:
        return ""
    parts = parent_urn.split("::")
    typ = parts[-2].split("$")[-1]
    return "" if typ == "pulumi:pulumi:Stack" else f"{typ}::{parts[-1]}"


def _redact(text: str, secrets: Sequence[str]) -> str:
    """Known secret values, CA fields whatever their spelling or wrapping, detected credentials."""
    return redact.redact(text, extra=secrets)


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders digit runs by value (``default-pods8`` before ``default-pods29``)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name))


def build_document(
    run: ProgramRun,
    violations: Sequence[Violation],
    *,
    drift: Mapping[str, Any] | None = None,
    cost: Mapping[str, Any] | None = None,
    redact: Sequence[str] = (),
    sources: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """The ``-o json`` document (spec: resources, policyViolations, outputs; plus summary and userData)."""
    resources: list[dict[str, Any]] = []
    user_data: list[dict[str, str]] = []
    for reg in sorted(run.registrations, key=lambda r: (r.type, natural_key(r.name), r.name, r.urn)):
        raw = reg.raw()
        entry: dict[str, Any] = {
            "type": reg.type,
            "name": reg.name,
            "parent": _parent_ref(reg.parent),
            "custom": reg.custom,
            "inputs": unwrap(raw),
        }
        secrets = secret_paths(raw)
        if secrets:
            entry["secretInputs"] = secrets
        resources.append(entry)
        if reg.type == LAUNCH_TEMPLATE:
            revealed = unwrap(raw, reveal=True)
            text = decode_user_data(revealed.get("userData"), encoded=True)
            tags = revealed.get("tags") or {}
            user_data.append(
                {
                    "launchTemplate": reg.name,
                    "nodePool": str(tags.get(labels.NODEPOOL, "")),
                    "content": _redact(text, redact),
                }
            )
    outputs = {
        k: (REDACTED if v.secret else (v.value if v.known else "[unknown]")) for k, v in run.outputs.items()
    }
    by_type = Counter(r["type"] for r in resources)
    mandatory = sum(1 for v in violations if v.enforcement == "mandatory")
    doc: dict[str, Any] = {
        "project": run.stack.project,
        "stack": run.stack.stack,
        "resources": resources,
        "policyViolations": [v.as_json() for v in violations],
        "outputs": outputs,
        "userData": user_data,
        "summary": {
            "resources": len(resources),
            "byType": dict(sorted(by_type.items())),
            "mandatoryViolations": mandatory,
            "advisoryViolations": len(violations) - mandatory,
        },
    }
    doc["findings"] = findings(doc["policyViolations"], resources, sources or {})
    if run.notes:
        doc["notes"] = list(dict.fromkeys(run.notes))
    if drift is not None:
        doc["drift"] = dict(drift)
    if cost is not None:
        doc["cost"] = dict(cost)
    return doc


# -- table ----------------------------------------------------------------------------------------


def render_table(doc: Mapping[str, Any]) -> str:
    rows = [(r["type"], r["name"], r["parent"] or "-") for r in doc["resources"]]
    out = [f"Previewing {doc['project']}/{doc['stack']} (offline, mock runtime)", ""]
    out.append(format_table(["TYPE", "NAME", "PARENT"], rows))
    vs = doc["policyViolations"]
    if vs:
        out += ["", "Policy Violations:"]
        for v in vs:
            out.append(f"    [{v['enforcement']}]  {v['policy']} ({v['resource']}: {v['type']})")
            out.append(f"    {v['message']}")
    out += ["", "Outputs:"]
    for k, v in doc["outputs"].items():
        out.append(f"    {k}: {v}")
    out += [f"note: {n}" for n in doc.get("notes", [])]
    cost = doc.get("cost")
    if cost:
        from nodewright.preview.cost_section import monthly_with_change

        out += [
            "",
            f"Cost ({cost['catalog']}): {cost['before']['nodes']} → {cost['after']['nodes']} nodes, "
            + monthly_with_change(cost["after"]["monthly"], cost["before"]["monthly"]),
        ]
        out += [f"note: cost: {n}" for n in cost.get("notes", [])]
    s = doc["summary"]
    out += [
        "",
        f"Resources: {s['resources']}; policy violations: {s['mandatoryViolations']} mandatory, "
        f"{s['advisoryViolations']} advisory",
    ]
    return "\n".join(out)


# -- markdown: nodewright.preview.comment ---------------------------------------------------------

__all__ = [
    "GITHUB_COMMENT_LIMIT",
    "build_document",
    "markdown_sections",
    "natural_key",
    "render_markdown",
    "render_table",
]
