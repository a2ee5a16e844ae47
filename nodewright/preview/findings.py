"""Policy violations folded back onto the user's files: one mistake, one finding.

Boundary: pure over the preview document's resources, the analyzer's violations and an index of
the stack's source objects (``Kind/name`` -> file and JSON path, built by
:func:`source_index`). A policy reports per generated resource (one launch template per max-pods
group, the EC2NodeClass CR, ...); a reviewer needs the object and field *they* wrote. Each
violation is mapped to its source object (by the resource's kind/name or its
``karpenter.k8s.aws/ec2nodeclass`` / ``karpenter.sh/nodepool`` tags) and the field the policy
checks (refined from the message where it names one), and identical findings are counted:
"``stacks/nodeclasses.yaml:documents[0].spec.metadataOptions.httpTokens`` (EC2NodeClass
``default``): ... — 18 generated resources".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from nodewright import labels
from nodewright.api.documents import Document

# policy -> (kind of the source object, the field it checks when the message names none)
POLICY_SOURCE: Final[Mapping[str, tuple[str, str]]] = {
    "ebs-encrypted": ("EC2NodeClass", "spec.blockDeviceMappings"),
    "imdsv2-required": ("EC2NodeClass", "spec.metadataOptions"),
    "custom-ami-has-user-data": ("EC2NodeClass", "spec.userData"),
    "user-data-safe": ("EC2NodeClass", "spec.userData"),
    "user-data-registers-nodepool": ("NodePool", "spec.template"),
    "nodepool-restricted-labels": ("NodePool", "spec.template"),
    "nodepool-hash-current": ("NodePool", "metadata.annotations"),
    "nodepool-pair-health": ("NodePool", "spec.template.spec.nodeClassRef"),
    "nodeclaim-hash-current": ("NodePool", "spec.template"),
}
# CRD policies: the CR's kind by resource type; the field is the path their message starts with.
CRD_POLICIES: Final = frozenset({"karpenter-crd-valid", "karpenter-crd-update-valid"})
_CR_KINDS: Final[Mapping[str, str]] = {
    "kubernetes:karpenter.sh/v1:NodePool": "NodePool",
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": "EC2NodeClass",
}
_CRD_FIELD: Final = re.compile(r"^([A-Za-z][^:\s]*): ")
_FIELD_PATTERNS: Final = (
    (re.compile(r"\bblockDeviceMappings\[(\d+)\]"), "spec.blockDeviceMappings[{0}].ebs.encrypted"),
    (re.compile(r"\bmetadataOptions\.(\w+)"), "spec.metadataOptions.{0}"),
    (re.compile(r"\bspec\.template\.metadata\.labels has '([^']+)'"), "spec.template.metadata.labels.{0}"),
    (re.compile(r"\b(spec\.template\.spec\.requirements\[\d+\]\.key)"), "{0}"),
)


def source_index(docs: Iterable[Document], base_dir: Path) -> dict[str, dict[str, str]]:
    """``Kind/name`` -> ``{"file", "path"}`` for every object of the stack's files (repo-relative)."""
    out: dict[str, dict[str, str]] = {}
    for d in docs:
        try:
            file = str(Path(d.file).resolve().relative_to(base_dir.resolve()))
        except ValueError:
            file = d.file
        out.setdefault(f"{d.kind}/{d.name}", {"file": file, "path": d.path})
    return out


def _source_name(kind: str, resource: Mapping[str, Any]) -> str:
    inputs = resource.get("inputs")
    if not isinstance(inputs, Mapping):
        return ""
    if resource["type"].startswith("kubernetes:"):
        meta = inputs.get("metadata")
        return str(meta.get("name", "")) if isinstance(meta, Mapping) else ""
    if resource["type"] == "nodewright:index:NodePool":
        return str(inputs.get("nodePool", ""))
    if resource["type"] == "nodewright:index:NodeClass":
        return str(inputs.get("nodeClass", ""))
    tags = inputs.get("tags")
    key = labels.EC2NODECLASS if kind == "EC2NodeClass" else labels.NODEPOOL
    return str(tags.get(key, "")) if isinstance(tags, Mapping) else ""


def _message(text: str, resource: str) -> str:
    for prefix in (f"{resource}: ", f"{resource} "):
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text


def findings(
    violations: Sequence[Mapping[str, Any]],
    resources: Sequence[Mapping[str, Any]],
    sources: Mapping[str, Mapping[str, str]],
) -> list[dict[str, Any]]:
    """One entry per (policy, source object, field, message), with the generated resources it affects."""
    by_key = {(r["type"], r["name"]): r for r in resources}  # a NodePool and a NodeClass may share a name
    grouped: dict[tuple[str, ...], dict[str, Any]] = {}
    for v in violations:
        kind, field = POLICY_SOURCE.get(v["policy"], ("", ""))
        if v["policy"] in CRD_POLICIES:
            kind = _CR_KINDS.get(v["type"], "")
        resource = by_key.get((v["type"], v["resource"]))
        name = _source_name(kind, resource) if resource is not None and kind else ""
        message = _message(v["message"], v["resource"])
        crd_field = _CRD_FIELD.match(message) if v["policy"] in CRD_POLICIES else None
        if crd_field and kind:
            field = crd_field.group(1)
            message = message[crd_field.end() :]
        for pattern, template in _FIELD_PATTERNS if crd_field is None else ():
            m = pattern.search(message)
            if m and kind:
                field = template.format(*m.groups())
                break
        src = sources.get(f"{kind}/{name}") if name else None
        path = ""
        if src is not None:
            path = f"{src['path']}.{field}" if src["path"] else field
        key = (v["policy"], v["enforcement"], kind, name, field, message)
        entry = grouped.setdefault(
            key,
            {
                "policy": v["policy"],
                "enforcement": v["enforcement"],
                "kind": kind or v["type"],
                "name": name or v["resource"],
                "file": src["file"] if src else "",
                "path": path or field,
                "message": message,
                "resources": [],
            },
        )
        entry["resources"].append(v["resource"])
    out = sorted(
        grouped.values(),
        key=lambda e: (e["enforcement"] != "mandatory", e["policy"], e["file"], e["path"], e["name"]),
    )
    for e in out:
        e["count"] = len(e["resources"])
    return out
