"""The pull-request comment (``nodewright preview -o markdown``): what a reviewer reads first.

Boundary: pure over a preview document (and the base branch's, ``--base``). Layout, top down:

1. summary: status, resource changes against the base (create / update / replace / delete, as
   ``pulumi preview --diff`` counts them), findings, drifted nodes, notes;
2. **NodePools**: one row per NodePool, never trimmed: its NodeClass, launch templates and max-pods
   values, what changes, how many nodes roll and in how many waves under its disruption budgets;
   then **cost** per NodePool, before and after the merge (:mod:`nodewright.preview.cost_section`);
3. **policy violations**, one line per user mistake: the user's file, object and field, and how many
   generated resources it affects (:mod:`nodewright.preview.findings`);
4. changed resources against the base, with the changed fields and why a replace is a replace
   (:mod:`nodewright.preview.diff`);
5. drift impact with rollout waves; 6. user data, one render per real difference
   (:mod:`nodewright.preview.userdata_groups`), diffed against the base; 7. resources; 8. outputs.

Sections 1-3 are always kept; the rest is trimmed block by block from the end to stay under
GitHub's 65,536-character comment limit, with a note.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any, Final

from nodewright.labels import NODEPOOL
from nodewright.preview.cost_section import cost_section, cost_summary
from nodewright.preview.diff import CHANGES, ResourceChange, counts, diff_documents
from nodewright.preview.userdata_groups import (
    CAPACITY_PLACEHOLDER,
    MAX_PODS_PLACEHOLDER,
    group_user_data,
    normalise,
)
from nodewright.tables import format_markdown_table

GITHUB_COMMENT_LIMIT: Final = 65536
_NODEPOOL_COMPONENT: Final = "nodewright:index:NodePool"
_NODECLASS_COMPONENT: Final = "nodewright:index:NodeClass"
_OP_MARK: Final = {"create": "+", "update": "~", "replace": "+-", "delete": "-"}


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


def _names(names: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(f"`{n}`" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _summary(
    doc: Mapping[str, Any], changes: list[ResourceChange] | None, base: Mapping[str, Any] | None = None
) -> str:
    s = doc["summary"]
    mandatory = s["mandatoryViolations"]
    status = ":x: mandatory policy violations" if mandatory else ":white_check_mark: no mandatory violations"
    findings = doc.get("findings", [])
    line = f"{status} — **{s['resources']}** resources"
    if changes is not None:
        c = counts(changes)
        line += " (" + ", ".join(f"**{c[op]}** to {op}" for op in CHANGES) + f", {c['same']} unchanged)"
    n_mand = sum(1 for f in findings if f["enforcement"] == "mandatory")
    line += f"; **{n_mand}** mandatory / **{len(findings) - n_mand}** advisory findings"
    drift = doc.get("drift")
    if drift:
        line += f"; **{drift['summary']['drifted']}** nodes would roll"
    if doc.get("cost"):
        line += "; " + cost_summary(doc["cost"], (base or {}).get("cost"))
    out = [f"### nodewright preview: `{doc['project']}/{doc['stack']}`", line + "."]
    if changes is None:
        out.append("> no `--base`: every resource is shown as new.")
    if not drift:
        out.append(
            "> no cluster state: drift impact is not computed (set `nodewright:clusterState: live` or pass "
            "`--cluster-state`)."
        )
    out += [f"> note: {n}" for n in doc.get("notes", [])]
    karpenter = doc.get("karpenter")
    if karpenter:
        rest = ", ".join(
            f"{k} `{str(v).lower() if isinstance(v, bool) else v}`"
            for k, v in karpenter.items()
            if k != "version"
        )
        out.append(f"> Karpenter `{karpenter.get('version')}`: {rest}.")
    return "\n\n".join(out)


_SHORT: Final = {
    "aws:ec2/launchTemplate:LaunchTemplate": "LT",
    "aws:ec2/instance:Instance": "instance",
    "kubernetes:karpenter.sh/v1:NodePool": "CR",
}


def _entry(inputs: object, key: str, sub: str) -> str:
    """``inputs[key][sub]`` as text, or "" where any level is not a mapping (a declared input of
    another shape, as a change may make it)."""
    outer = inputs.get(key) if isinstance(inputs, Mapping) else None
    return str(outer.get(sub, "")) if isinstance(outer, Mapping) else ""


def _ops_by_pool(
    doc: Mapping[str, Any], base: Mapping[str, Any] | None, changes: list[ResourceChange]
) -> dict[str, dict[tuple[str, str], int]]:
    """Per NodePool: (resource kind, op) -> count, for its launch templates, instances and CR."""
    pool_of: dict[tuple[str, str], str] = {}
    for d in (base or {}, doc):
        for r in d.get("resources", []):
            inputs = r.get("inputs") or {}
            if r["type"] == "kubernetes:karpenter.sh/v1:NodePool":
                pool_of[(r["type"], r["name"])] = _entry(inputs, "metadata", "name")
            elif r["type"] in _SHORT:
                pool_of[(r["type"], r["name"])] = _entry(inputs, "tags", NODEPOOL)
    out: dict[str, dict[tuple[str, str], int]] = {}
    for c in changes:
        pool = pool_of.get((c.type, c.name))
        if c.op == "same" or not pool:
            continue
        key = (_SHORT[c.type], c.op)
        out.setdefault(pool, {})[key] = out.setdefault(pool, {}).get(key, 0) + 1
    return out


def _pool_rows(
    doc: Mapping[str, Any], base: Mapping[str, Any] | None, changes: list[ResourceChange] | None
) -> list[tuple[Any, ...]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in doc["resources"]:
        if r["type"] == _NODECLASS_COMPONENT:
            for g in r["inputs"].get("launchTemplateGroups") or []:
                groups.setdefault(str(g.get("nodePool", "")), []).append(g)
    pool_ops = _ops_by_pool(doc, base, changes or [])
    drift = {p["name"]: p for p in (doc.get("drift") or {}).get("nodePools", [])}
    rows = []
    for r in doc["resources"]:
        if r["type"] != _NODEPOOL_COMPONENT:
            continue
        name = str(r["inputs"].get("nodePool", r["name"]))
        lts = groups.get(name, [])
        pods = sorted({int(g["maxPods"]) for g in lts if g.get("maxPods") is not None})
        change = (
            "-"
            if changes is None
            else ", ".join(
                f"{n} {short} {op}" if short != "CR" else f"CR {op}"
                for (short, op), n in sorted(pool_ops.get(name, {}).items())
            )
            or "unchanged"
        )
        d = drift.get(name)
        if d is None:
            roll = "-"
        else:
            ro = d.get("rollout") or {}
            per = ro.get("allowedPerWave")
            waves = _blocked_by(ro) if ro.get("blocked") else f"{ro.get('waves', '-')} wave(s)"
            roll = f"{d.get('replaced', 0)} of {d.get('nodeClaims', 0)}" + (
                f", {'all' if per is None else per} at a time, {waves}" if d.get("replaced") else ""
            )
        pods_text = (
            f"{pods[0]}" if len(pods) == 1 else f"{pods[0]}–{pods[-1]} ({len(pods)} values)" if pods else "-"
        )
        rows.append((f"`{name}`", f"`{r['inputs'].get('nodeClass', '')}`", len(lts), pods_text, change, roll))
    return rows


def _findings(doc: Mapping[str, Any]) -> list[str]:
    out = []
    for f in doc.get("findings", []):
        where = f"`{f['file']}:{f['path']}`" if f["file"] else f"`{f['path']}`"
        out.append(
            f"- **[{f['enforcement']}]** `{f['policy']}` — {where} ({f['kind']} `{f['name']}`): {f['message']}"
            f" — affects **{f['count']}** generated resource{'s' if f['count'] != 1 else ''} "
            f"({_names(f['resources'])})"
        )
    return out


FIELDS_SHOWN: Final = 5
"""Changed fields shown with their values per resource row; the rest are counted ("and K more")."""


def _fields(c: ResourceChange) -> str:
    """``path: old → new; ...`` (at most :data:`FIELDS_SHOWN`), else the changed paths' names."""
    shown = [v.text() for v in c.values[:FIELDS_SHOWN]]
    rest = len(c.values) - len(shown) + c.more_values
    if "userData" in c.fields:
        shown.append("userData (see User data)")
    if not shown:
        return ", ".join(c.fields)
    return "; ".join(shown) + (f"; and {rest} more" if rest else "")


def _changes(changes: list[ResourceChange]) -> list[str]:
    """Changed resources; those with the same change (op, type, values) fold into one row."""
    folded: dict[tuple[str, str, str], list[str]] = {}
    for c in changes:
        if c.op == "same":
            continue
        why = f" (replace: {', '.join(c.replace_because)})" if c.replace_because else ""
        fields = (_fields(c) + why) or "-"
        folded.setdefault((c.op, c.type, fields), []).append(c.name)
    if not folded:
        return ["#### Changes against base", "No resource changes."]
    rows = [
        (_OP_MARK[op] + " " + op, f"`{typ}`", _names(names), fields)
        for (op, typ, fields), names in sorted(
            folded.items(), key=lambda kv: (CHANGES.index(kv[0][0]), kv[0][1])
        )
    ]
    return [
        "#### Changes against base",
        format_markdown_table(["op", "type", "resources", "changed fields (old → new)"], rows),
    ]


def _window(w: Mapping[str, Any]) -> str:
    """A scheduled budget's window, as ``drift``'s table prints it."""
    head = f"budgets[{w.get('budget')}] (nodes {w.get('nodes')}, schedule `{w.get('schedule')}` for {w.get('duration')})"
    if w.get("active"):
        return head + (f" active until {w['closesAt']}" if w.get("closesAt") else " active, with no end")
    return head + (
        f" inactive, opens at {w['opensAt']}" if w.get("opensAt") else " inactive, not within five years"
    )


def _drift(doc: Mapping[str, Any]) -> list[str]:
    drift = doc.get("drift")
    if not drift:
        return []
    at = f", at {drift['at']}" if drift.get("at") else ""
    sec = [f"#### Drift impact (cluster state: `{drift.get('clusterState', '?')}`{at})"]
    rows = []
    notes: list[str] = []
    for p in drift.get("nodePools", []):
        h = p.get("hash", {})
        r = p.get("rollout") or {}
        per = r.get("allowedPerWave")
        rows.append(
            (
                p["name"],
                f"{h.get('before') or '(new)'} → {h.get('after')}",
                p.get("nodeClaims", 0),
                p.get("replaced", 0),
                ("all" if per is None else per) if r else "-",
                _blocked_by(r) if r.get("blocked") else r.get("waves", "-"),
                ", ".join(f"{k}: {n}" for k, n in sorted(p.get("reasons", {}).items())) or "-",
            )
        )
        notes += [f"> `{p['name']}`: {n}" for n in r.get("notes", [])]
        notes += [f"> `{p['name']}`: {_window(w)}" for w in r.get("windows", [])]
    notes += [f"> note: {n}" for n in drift.get("notes", [])]
    sec.append(
        format_markdown_table(
            ["NodePool", "hash", "NodeClaims", "replaced", "per wave", "waves", "reasons"], rows
        )
    )
    return sec + notes


def _user_data(doc: Mapping[str, Any], base: Mapping[str, Any] | None) -> list[str]:
    entries = doc.get("userData", [])
    if not entries:
        return []
    base_ud = {u["launchTemplate"]: u["content"] for u in (base or {}).get("userData", [])}
    sec = ["#### User data" + (" (diff against base)" if base is not None else " (no --base: full render)")]
    for g in group_user_data(entries):
        label = (
            f"<code>{g.members[0]}</code>" if len(g.members) == 1 else f"{len(g.members)} launch templates"
        )
        varying = f", identical but for {g.varying}" if g.varying else ""
        head = f"{label} (NodePool <code>{g.node_pool}</code>{varying})"
        members = "" if len(g.members) == 1 else f"Launch templates: {_names(g.members, 50)}.\n\n"
        if base is None:
            sec.append(f"<details><summary>{head}</summary>\n\n{members}{_fence(g.content)}\n\n</details>")
            continue
        before = next((base_ud[m] for m in g.members if m in base_ud), None)
        if before is not None and len(g.members) > 1:
            before = _like(before, g.content)
        if before == g.content:
            sec.append(f"- {head}: unchanged")
            continue
        text, plus, minus = _diff(before, g.content, g.members[0])
        change = "new" if before is None else f"+{plus} −{minus}"
        sec.append(
            f"<details><summary>{head}, {change}</summary>\n\n{members}{_fence(text, 'diff')}\n\n</details>"
        )
    if base is not None:
        gone = sorted(set(base_ud) - {u["launchTemplate"] for u in entries})
        if gone:
            sec.append(f"- removed: {_names(gone, 20)}")
    return sec


def _like(before: str, group_content: str) -> str:
    """A base render normalised the way the head group was (placeholders only where the group has them)."""
    norm, pods, capacity = normalise(before)
    if MAX_PODS_PLACEHOLDER not in group_content and len(pods) == 1:
        norm = norm.replace(MAX_PODS_PLACEHOLDER, str(pods[0]))
    if CAPACITY_PLACEHOLDER not in group_content and len(capacity) == 1:
        norm = norm.replace(CAPACITY_PLACEHOLDER, capacity[0])
    return norm


def _resources(doc: Mapping[str, Any]) -> list[str]:
    by_type: dict[str, list[str]] = {}
    for r in doc["resources"]:
        by_type.setdefault(r["type"], []).append(r["name"])
    sec = [
        "#### Resources",
        format_markdown_table(["resource type", "count"], sorted((t, len(n)) for t, n in by_type.items())),
    ]
    for typ, names in sorted(by_type.items()):
        sec.append(
            f"<details><summary><code>{typ}</code> ({len(names)})</summary>\n\n"
            + "\n".join(f"- `{n}`" for n in names)
            + "\n\n</details>"
        )
    return sec


def markdown_sections(
    doc: Mapping[str, Any], *, base: Mapping[str, Any] | None = None
) -> list[tuple[bool, list[str]]]:
    """The comment as (always kept?, atomic blocks) sections, in order."""
    changes = diff_documents(base, doc) if base is not None else None
    sections: list[tuple[bool, list[str]]] = [(True, [_summary(doc, changes, base)])]
    rows = _pool_rows(doc, base, changes)
    if rows:
        sections.append(
            (
                True,
                [
                    "#### NodePools",
                    format_markdown_table(
                        ["NodePool", "NodeClass", "launch templates", "max-pods", "change", "nodes rolling"],
                        rows,
                    ),
                ],
            )
        )
    cost = cost_section(doc.get("cost"), (base or {}).get("cost"))
    if cost:
        sections.append((True, cost))
    found = _findings(doc)
    if found:
        sections.append((True, ["#### Policy violations", "\n".join(found)]))
    if changes is not None:
        sections.append((False, _changes(changes)))
    for sec in (_drift(doc), _user_data(doc, base), _resources(doc)):
        if sec:
            sections.append((False, sec))
    sections.append(
        (False, ["#### Outputs", _fence("\n".join(f"{k}: {v}" for k, v in doc["outputs"].items()))])
    )
    return sections


def render_markdown(
    doc: Mapping[str, Any], *, base: Mapping[str, Any] | None = None, limit: int = GITHUB_COMMENT_LIMIT
) -> str:
    """The pull-request comment, under ``limit`` characters; sections 1-3 are always kept."""
    sections = markdown_sections(doc, base=base)
    note_tpl = (
        "\n\n> :warning: trimmed to fit a GitHub comment: {n} more block(s) omitted; the full report is "
        "in the job summary's artifact, or run `nodewright preview -o markdown` locally."
    )
    budget = limit - len(note_tpl) - 16
    parts: list[str] = []
    used = 0
    omitted = 0
    for keep, sec in sections:  # the kept sections come first
        for block in sec:
            piece = ("\n\n" if parts else "") + block
            if keep or (omitted == 0 and used + len(piece) <= budget):
                parts.append(piece)
                used += len(piece)
            else:
                omitted += 1
    text = "".join(parts)
    if omitted:
        text += note_tpl.format(n=omitted)
    if len(text) >= limit:  # the kept sections alone are over the limit: hard cut, still valid text
        text = text[: limit - 300] + note_tpl.format(n="some")
    return text + "\n"


def _blocked_by(rollout: Mapping[str, Any]) -> str:
    """What holds a blocked rollout: the budget, or (static NodePools) the node limit or replicas."""
    if rollout.get("static") and rollout.get("headroom") == 0:
        return "blocked (static NodePool: no node-limit headroom for a replacement)"
    return "blocked by budget"
