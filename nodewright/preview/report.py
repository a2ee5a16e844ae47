"""The preview report: the JSON document of ``nodewright preview -o json``, its table and the
pull-request comment of ``-o markdown``.

Boundary: pure over a :class:`~nodewright.preview.runner.ProgramRun` and the analyzer's violations.
Secrets print as ``[secret]``; the only secret content shown is the user data of launch templates
(the reviewer must see what nodes boot with), and it is redacted of every known secret value (CA
bundle, ``secure:`` stack config) first. The user-data diff is against a *base* preview JSON
(``--base``: the same command run on the base branch), else the whole render is shown as new.
The markdown stays under GitHub's 65,536-character comment limit, trimming from the end and
always keeping the summary.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

from nodewright import labels
from nodewright.policy.resources import LAUNCH_TEMPLATE, decode_user_data
from nodewright.policy.userdata_read import without_cluster_ca
from nodewright.preview.analyzer import Violation
from nodewright.preview.mocks import secret_paths, unwrap
from nodewright.preview.runner import ProgramRun
from nodewright.tables import format_markdown_table, format_table

GITHUB_COMMENT_LIMIT: Final = 65536
REDACTED: Final = "[secret]"


def _parent_ref(parent_urn: str) -> str:
    if not parent_urn or "::" not in parent_urn:
        return ""
    parts = parent_urn.split("::")
    typ = parts[-2].split("$")[-1]
    return "" if typ == "pulumi:pulumi:Stack" else f"{typ}::{parts[-1]}"


def _redact(text: str, secrets: Sequence[str]) -> str:
    for s in sorted({s for s in secrets if s and len(s) >= 4}, key=lambda s: (-len(s), s)):
        text = text.replace(s, REDACTED)
    # The CA field itself, whatever its spelling (a renderer may re-encode the configured bundle).
    return without_cluster_ca(text, replacement=REDACTED)


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders digit runs by value (``default-pods8`` before ``default-pods29``)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name))


def build_document(
    run: ProgramRun,
    violations: Sequence[Violation],
    *,
    drift: Mapping[str, Any] | None = None,
    redact: Sequence[str] = (),
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
    if run.notes:
        doc["notes"] = list(dict.fromkeys(run.notes))
    if drift is not None:
        doc["drift"] = dict(drift)
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
    s = doc["summary"]
    out += [
        "",
        f"Resources: {s['resources']}; policy violations: {s['mandatoryViolations']} mandatory, "
        f"{s['advisoryViolations']} advisory",
    ]
    return "\n".join(out)


# -- markdown -------------------------------------------------------------------------------------


def _diff(before: str | None, after: str, name: str) -> tuple[str, int, int]:
    a = (before or "").splitlines(keepends=False)
    b = after.splitlines(keepends=False)
    lines = list(difflib.unified_diff(a, b, fromfile=f"base/{name}", tofile=f"head/{name}", lineterm="", n=3))
    body = lines[2:]  # after the ---/+++ file headers
    plus = sum(1 for x in body if x.startswith("+"))
    minus = sum(1 for x in body if x.startswith("-"))
    return "\n".join(lines), plus, minus


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def markdown_sections(doc: Mapping[str, Any], *, base: Mapping[str, Any] | None = None) -> list[list[str]]:
    """The comment as sections of atomic blocks; the first section is the summary."""
    s = doc["summary"]
    vs = doc["policyViolations"]
    mandatory = s["mandatoryViolations"]
    status = ":x: mandatory policy violations" if mandatory else ":white_check_mark: no mandatory violations"
    summary = [
        f"### nodewright preview: `{doc['project']}/{doc['stack']}`",
        f"{status} — **{s['resources']}** resources, **{mandatory}** mandatory / "
        f"**{s['advisoryViolations']}** advisory policy violations"
        + (f", **{doc['drift']['summary']['drifted']}** NodeClaims drifted" if doc.get("drift") else "")
        + ".",
        *[f"> note: {n}" for n in doc.get("notes", [])],
        format_markdown_table(["resource type", "count"], sorted(s["byType"].items())),
    ]
    sections: list[list[str]] = [["\n\n".join(summary)]]

    if vs:
        sec = ["#### Policy violations"]
        for v in vs:
            sec.append(
                f"- **[{v['enforcement']}]** `{v['policy']}` (`{v['resource']}`: `{v['type']}`)  \n  {v['message']}"
            )
        sections.append(sec)

    drift = doc.get("drift")
    if drift:
        sec = [f"#### Drift impact (cluster state: `{drift.get('clusterState', '?')}`)"]
        rows = []
        rollout_notes: list[str] = []
        for p in drift.get("nodePools", []):
            h = p.get("hash", {})
            r = p.get("rollout") or {}
            per = r.get("allowedPerWave")
            waves = "blocked by budget" if r.get("blocked") else r.get("waves", "-")
            rows.append(
                (
                    p["name"],
                    f"{h.get('before') or '(new)'} → {h.get('after')}",
                    p.get("nodeClaims", 0),
                    p.get("replaced", 0),
                    "all" if per is None and r else per if r else "-",
                    waves,
                    ", ".join(f"{k}: {n}" for k, n in sorted(p.get("reasons", {}).items())) or "-",
                )
            )
            rollout_notes += [f"> `{p['name']}`: {n}" for n in r.get("notes", [])]
        sec.append(
            format_markdown_table(
                ["NodePool", "hash", "NodeClaims", "replaced", "per wave", "waves", "reasons"], rows
            )
        )
        sec += rollout_notes
        sections.append(sec)

    base_ud = {u["launchTemplate"]: u["content"] for u in (base or {}).get("userData", [])}
    ud_sec = [
        "#### User data" + (" (diff against base)" if base is not None else " (no --base: full render)")
    ]
    for u in doc.get("userData", []):
        name = u["launchTemplate"]
        before = base_ud.get(name) if base is not None else None
        if base is not None and before == u["content"]:
            ud_sec.append(f"- `{name}`: unchanged")
            continue
        text, plus, minus = _diff(before, u["content"], name)
        label = "new" if before is None else f"+{plus} −{minus}"
        ud_sec.append(
            f"<details><summary><code>{name}</code> (NodePool <code>{u['nodePool']}</code>, {label})</summary>\n\n"
            f"{_fence(text, 'diff')}\n\n</details>"
        )
    if base is not None:
        for gone in sorted(set(base_ud) - {u["launchTemplate"] for u in doc.get("userData", [])}):
            ud_sec.append(f"- `{gone}`: removed")
    if len(ud_sec) > 1:
        sections.append(ud_sec)

    res_sec = ["#### Resources"]
    by_type: dict[str, list[str]] = {}
    for r in doc["resources"]:
        by_type.setdefault(r["type"], []).append(r["name"])
    for typ, names in sorted(by_type.items()):
        res_sec.append(
            f"<details><summary><code>{typ}</code> ({len(names)})</summary>\n\n"
            + "\n".join(f"- `{n}`" for n in names)
            + "\n\n</details>"
        )
    sections.append(res_sec)

    out_sec = ["#### Outputs", _fence("\n".join(f"{k}: {v}" for k, v in doc["outputs"].items()))]
    sections.append(out_sec)
    return sections


def render_markdown(
    doc: Mapping[str, Any], *, base: Mapping[str, Any] | None = None, limit: int = GITHUB_COMMENT_LIMIT
) -> str:
    """The pull-request comment, under ``limit`` characters; the summary is always kept."""
    sections = markdown_sections(doc, base=base)
    note_tpl = "\n\n> :warning: trimmed to fit a GitHub comment: {n} more block(s) omitted; run `nodewright preview -o markdown` locally for the full report."
    budget = limit - len(note_tpl) - 16
    parts: list[str] = []
    used = 0
    omitted = 0
    for i, sec in enumerate(sections):
        for j, block in enumerate(sec):
            piece = ("\n\n" if parts else "") + block
            if i == 0 or (omitted == 0 and used + len(piece) <= budget):
                parts.append(piece)
                used += len(piece)
            else:
                omitted += 1
            del j
    text = "".join(parts)
    if omitted:
        text += note_tpl.format(n=omitted)
    if len(text) >= limit:  # the summary alone is over the limit: hard cut, still valid text
        text = text[: limit - 200] + note_tpl.format(n="some")
    return text + "\n"
