"""Karpenter's CRD (CEL/OpenAPI) and webhook rules for NodePools and EC2NodeClasses.

Each ``validate_*`` walks one object and adds every problem it finds to a
:class:`~nodewright.errors.Collector` (file + JSON path + message with a hint at the fix), so a
user sees all of them at once. Messages quote Karpenter's CRD messages where it has one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from nodewright import labels
from nodewright.api.amifamily import ALIAS_FAMILIES, AMI_FAMILIES
from nodewright.api.core import Pod
from nodewright.api.ec2nodeclass import EC2NodeClass
from nodewright.api.karpenter import NodePool
from nodewright.errors import Collector

QUALIFIED_NAME = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
)
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
DURATION_OR_NEVER = re.compile(r"^(([0-9]+(s|m|h))+|Never)$")
DURATION = re.compile(r"^([0-9]+(s|m|h))+$")
BUDGET_NODES = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")
ALIAS = re.compile(r"^[a-zA-Z0-9]+@.+$")
INT_OPERATORS = ("Gt", "Lt", "Gte", "Lte")
CONSOLIDATION_POLICIES = ("WhenEmpty", "WhenEmptyOrUnderutilized")
BUDGET_REASONS = ("Underutilized", "Empty", "Drifted")
RESERVED_KEYS = ("cpu", "memory", "ephemeral-storage", "pid")
EVICTION_SIGNALS = (
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "pid.available",
)
RESTRICTED_TAG_PATTERNS = (
    (re.compile(r"^kubernetes\.io/cluster/[0-9A-Za-z][A-Za-z0-9\-_]*$"), "kubernetes.io/cluster/"),
    (re.compile(rf"^{re.escape(labels.NODEPOOL)}$"), labels.NODEPOOL),
    (re.compile(r"^eks:eks-cluster-name$"), "eks:eks-cluster-name"),
    (re.compile(r"^karpenter\.sh/nodeclaim$"), "karpenter.sh/nodeclaim"),
    (re.compile(rf"^{re.escape(labels.EC2NODECLASS)}$"), labels.EC2NODECLASS),
)


def hint(value: str, choices: Iterable[str]) -> str:
    """`` (typo of "X"?)`` when ``value`` is close to one of ``choices``, else ``""``."""
    options = list(choices)
    for option in options:
        if option.lower() == value.lower() and option != value:
            return f' (typo of "{option}"?)'
    match = difflib.get_close_matches(value, options, n=1, cutoff=0.75)
    return f' (typo of "{match[0]}"?)' if match and match[0] != value else ""


def _known_label_keys() -> list[str]:
    return sorted(labels.WELL_KNOWN_LABELS | labels.K8S_WELL_KNOWN_LABELS)


def check_quantity(c: Collector, path: str, value: Any) -> None:
    from nodewright.algebra.quantity import parse_quantity

    try:
        parse_quantity(value)
    except (ValueError, TypeError) as exc:
        c.add(path, str(exc))


def check_label_key(c: Collector, path: str, key: str, *, nodepool: bool) -> None:
    if not key or len(key) > 316 or not QUALIFIED_NAME.match(key):
        c.add(
            path,
            f'invalid label key "{key}": must be a qualified name (optional DNS prefix and "/", then '
            "alphanumerics, '-', '_' or '.', at most 63 characters)",
        )
        return
    reason = labels.restricted_label_reason(key, nodepool_label_forbidden=nodepool)
    if reason == f'label "{labels.HOSTNAME}" is restricted':
        c.add(
            path, f"{reason}; Karpenter sets it per node (spread over hosts with topologySpreadConstraints)"
        )
    elif reason == f'label "{labels.NODEPOOL}" is restricted':
        c.add(path, f"{reason}; Karpenter sets it to the NodePool's name")
    elif reason:
        c.add(
            path,
            f"{reason}; use a well-known label or a key outside that domain{hint(key, _known_label_keys())}",
        )


def check_label_value(c: Collector, path: str, value: str) -> None:
    if len(value) > 63 or not LABEL_VALUE.match(value):
        c.add(
            path,
            f'invalid label value "{value}": at most 63 characters, alphanumerics, "-", "_" or "." and '
            "starting and ending with an alphanumeric",
        )


def check_requirement(c: Collector, path: str, req: Any, *, nodepool: bool) -> None:
    """One NodeSelectorRequirement(WithMinValues) against Karpenter's rules."""
    key, op, values = req.key, req.operator, list(req.values)
    check_label_key(c, f"{path}.key", key, nodepool=nodepool)
    if op not in labels.OPERATORS:
        c.add(
            f"{path}.operator",
            f'unsupported operator "{op}"; use one of {", ".join(labels.OPERATORS)}{hint(op, labels.OPERATORS)}',
        )
        return
    for i, v in enumerate(values):
        check_label_value(c, f"{path}.values[{i}]", v)
    if op == "In" and not values:
        c.add(f"{path}.values", "requirements with operator 'In' must have a value defined")
    if op in ("Exists", "DoesNotExist") and values:
        c.add(f"{path}.values", f"operator {op} takes no values; remove them or use In/NotIn")
    if op in INT_OPERATORS and (len(values) != 1 or not values[0].isdigit()):
        pair = "'Gt' or 'Lt'" if op in ("Gt", "Lt") else "'Gte' or 'Lte'"
        c.add(f"{path}.values", f"requirements operator {pair} must have a single positive integer value")
    min_values = getattr(req, "min_values", None)
    if min_values is not None:
        if not 1 <= min_values <= 50:
            c.add(f"{path}.minValues", f"minValues must be between 1 and 50, got {min_values}")
        elif op == "In" and len(values) < min_values:
            c.add(
                f"{path}.minValues",
                "requirements with 'minValues' must have at least that many values specified in the 'values' field",
            )


def check_taint(c: Collector, path: str, taint: Any) -> None:
    if not taint.key or not QUALIFIED_NAME.match(taint.key):
        c.add(f"{path}.key", f'invalid taint key "{taint.key}": must be a qualified name')
    if taint.value and (len(taint.value) > 63 or not LABEL_VALUE.match(taint.value)):
        c.add(f"{path}.value", f'invalid taint value "{taint.value}"')
    if taint.effect not in labels.TAINT_EFFECTS:
        effects = sorted(labels.TAINT_EFFECTS)
        c.add(
            f"{path}.effect",
            f'unsupported taint effect "{taint.effect}"; use one of {", ".join(effects)}{hint(taint.effect, effects)}',
        )


def check_duration(c: Collector, path: str, value: str | None, *, never: bool) -> None:
    if value is None:
        return
    pattern = DURATION_OR_NEVER if never else DURATION
    if not pattern.match(value):
        example = "720h, 30m, 1h30m" + (" or Never" if never else "")
        c.add(path, f'invalid duration "{value}": use hours, minutes and seconds such as {example}')


def validate_nodepool(np: NodePool, c: Collector) -> None:
    at = np.origin_path
    if not np.metadata.name:
        c.add(at("metadata.name"), "a NodePool needs a name")
    tmpl = np.spec.template
    for key, value in sorted(tmpl.metadata.labels.items()):
        check_label_key(c, at(f"spec.template.metadata.labels[{key}]"), key, nodepool=True)
        check_label_value(c, at(f"spec.template.metadata.labels[{key}]"), value)
    if len(tmpl.metadata.labels) > 100:
        c.add(at("spec.template.metadata.labels"), "at most 100 labels")
    spec = tmpl.spec
    if len(spec.requirements) > 100:
        c.add(at("spec.template.spec.requirements"), "at most 100 requirements")
    for i, req in enumerate(spec.requirements):
        check_requirement(c, at(f"spec.template.spec.requirements[{i}]"), req, nodepool=True)
    for field, taints in (("taints", spec.taints), ("startupTaints", spec.startup_taints)):
        for i, taint in enumerate(taints):
            check_taint(c, at(f"spec.template.spec.{field}[{i}]"), taint)
    ref = spec.node_class_ref
    for field in ("group", "kind", "name"):
        if not getattr(ref, field):
            c.add(at(f"spec.template.spec.nodeClassRef.{field}"), f"{field} may not be empty")
    check_duration(c, at("spec.template.spec.expireAfter"), spec.expire_after, never=True)
    check_duration(
        c, at("spec.template.spec.terminationGracePeriod"), spec.termination_grace_period, never=False
    )
    d = np.spec.disruption
    check_duration(c, at("spec.disruption.consolidateAfter"), d.consolidate_after, never=True)
    if d.consolidation_policy not in CONSOLIDATION_POLICIES:
        c.add(
            at("spec.disruption.consolidationPolicy"),
            f'unsupported consolidationPolicy "{d.consolidation_policy}"; use one of '
            f"{', '.join(CONSOLIDATION_POLICIES)}{hint(d.consolidation_policy, CONSOLIDATION_POLICIES)}",
        )
    if len(d.budgets) > 50:
        c.add(at("spec.disruption.budgets"), "at most 50 budgets")
    for i, b in enumerate(d.budgets):
        bp = at(f"spec.disruption.budgets[{i}]")
        if not BUDGET_NODES.match(b.nodes):
            c.add(f"{bp}.nodes", f'invalid nodes "{b.nodes}": a count such as 5 or a percentage such as 10%')
        if (b.schedule is None) != (b.duration is None):
            c.add(bp, "'schedule' must be set with 'duration'")
        check_duration(c, f"{bp}.duration", b.duration, never=False)
        for j, r in enumerate(b.reasons or []):
            if r not in BUDGET_REASONS:
                c.add(
                    f"{bp}.reasons[{j}]", f'unsupported reason "{r}"; use one of {", ".join(BUDGET_REASONS)}'
                )
    for limit in sorted(np.spec.limits):
        check_quantity(c, at(f"spec.limits.{limit}"), np.spec.limits[limit])
    if np.spec.weight is not None and not 1 <= np.spec.weight <= 100:
        c.add(at("spec.weight"), f"weight must be between 1 and 100, got {np.spec.weight}")


def validate_ec2nodeclass(nc: EC2NodeClass, c: Collector) -> None:
    at = nc.origin_path
    spec = nc.spec
    if not nc.metadata.name:
        c.add(at("metadata.name"), "an EC2NodeClass needs a name")
    for field, terms in (
        ("subnetSelectorTerms", spec.subnet_selector_terms),
        ("securityGroupSelectorTerms", spec.security_group_selector_terms),
        ("amiSelectorTerms", spec.ami_selector_terms),
    ):
        if not terms:
            c.add(at(f"spec.{field}"), f"{field} is required: give at least one term")
        elif len(terms) > 30:
            c.add(at(f"spec.{field}"), f"{field} takes at most 30 terms")
    for i, sterm in enumerate(spec.subnet_selector_terms):
        if not sterm.tags and not sterm.id:
            c.add(at(f"spec.subnetSelectorTerms[{i}]"), "expected at least one, got none, ['tags', 'id']")
        elif sterm.tags and sterm.id:
            c.add(
                at(f"spec.subnetSelectorTerms[{i}]"),
                "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term",
            )
    for i, gterm in enumerate(spec.security_group_selector_terms):
        if not gterm.tags and not gterm.id and not gterm.name:
            c.add(
                at(f"spec.securityGroupSelectorTerms[{i}]"),
                "expected at least one, got none, ['tags', 'id', 'name']",
            )
    has_alias = False
    for i, aterm in enumerate(spec.ami_selector_terms):
        ap = at(f"spec.amiSelectorTerms[{i}]")
        fields = [f for f in ("alias", "tags", "id", "name", "ssm_parameter") if getattr(aterm, f)]
        if not fields:
            c.add(ap, "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']")
        if aterm.alias is not None:
            has_alias = True
            if not ALIAS.match(aterm.alias):
                c.add(
                    f"{ap}.alias",
                    f'invalid alias "{aterm.alias}": use <family>@<version>, e.g. al2023@latest',
                )
            else:
                fam = aterm.alias.split("@", 1)[0].lower()
                if fam not in ALIAS_FAMILIES:
                    c.add(
                        f"{ap}.alias",
                        f'unknown alias family "{fam}"; use one of {", ".join(ALIAS_FAMILIES)}{hint(fam, ALIAS_FAMILIES)}',
                    )
            if len(fields) > 1 or aterm.owner:
                c.add(
                    ap,
                    "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
                )
            if len(spec.ami_selector_terms) > 1:
                c.add(
                    ap,
                    "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
                )
    if spec.ami_family is not None and spec.ami_family not in AMI_FAMILIES:
        c.add(
            at("spec.amiFamily"),
            f'unsupported amiFamily "{spec.ami_family}"; use one of {", ".join(AMI_FAMILIES)}{hint(spec.ami_family, AMI_FAMILIES)}',
        )
    if spec.ami_family is None and not has_alias and spec.ami_selector_terms:
        c.add(at("spec.amiFamily"), "amiFamily is required unless amiSelectorTerms holds an alias")
    if (spec.role is None) == (spec.instance_profile is None):
        c.add(at("spec"), "must specify exactly one of ['role', 'instanceProfile']")
    for key in sorted(spec.tags):
        if not key:
            c.add(at("spec.tags"), "empty tag keys aren't supported")
        for pattern, name in RESTRICTED_TAG_PATTERNS:
            if pattern.match(key):
                c.add(
                    at(f"spec.tags[{key}]"),
                    f"tag contains a restricted tag matching {name}; Karpenter sets it itself",
                )
    roots = [i for i, b in enumerate(spec.block_device_mappings) if b.root_volume]
    if len(roots) > 1:
        c.add(at("spec.blockDeviceMappings"), "must have only one blockDeviceMappings with rootVolume")
    for i, bdm in enumerate(spec.block_device_mappings):
        if bdm.ebs is not None and bdm.ebs.volume_size is not None:
            check_quantity(c, at(f"spec.blockDeviceMappings[{i}].ebs.volumeSize"), bdm.ebs.volume_size)
    if spec.instance_store_policy is not None and spec.instance_store_policy != "RAID0":
        c.add(
            at("spec.instanceStorePolicy"),
            f'unsupported instanceStorePolicy "{spec.instance_store_policy}"; the only value is RAID0',
        )
    mo = spec.metadata_options
    for field, value, allowed in (
        ("httpEndpoint", mo.http_endpoint, ("enabled", "disabled")),
        ("httpProtocolIPv6", mo.http_protocol_ipv6, ("enabled", "disabled")),
        ("httpTokens", mo.http_tokens, ("required", "optional")),
    ):
        if value not in allowed:
            c.add(
                at(f"spec.metadataOptions.{field}"),
                f'unsupported value "{value}"; use one of {", ".join(allowed)}',
            )
    if not 1 <= mo.http_put_response_hop_limit <= 64:
        c.add(at("spec.metadataOptions.httpPutResponseHopLimit"), "must be between 1 and 64")
    if spec.kubelet is not None:
        _validate_kubelet(spec.kubelet, c, at("spec.kubelet"))


def _validate_kubelet(k: Any, c: Collector, path: str) -> None:
    for field, mapping in (("systemReserved", k.system_reserved), ("kubeReserved", k.kube_reserved)):
        for key, value in sorted((mapping or {}).items()):
            if key not in RESERVED_KEYS:
                c.add(
                    f"{path}.{field}[{key}]",
                    f"valid keys for {field} are {list(RESERVED_KEYS)}{hint(key, RESERVED_KEYS)}",
                )
            else:
                check_quantity(c, f"{path}.{field}[{key}]", value)
    for field, mapping in (
        ("evictionHard", k.eviction_hard),
        ("evictionSoft", k.eviction_soft),
        ("evictionSoftGracePeriod", k.eviction_soft_grace_period),
    ):
        for key in sorted(mapping or {}):
            if key not in EVICTION_SIGNALS:
                c.add(
                    f"{path}.{field}[{key}]",
                    f"valid keys for {field} are {list(EVICTION_SIGNALS)}{hint(key, EVICTION_SIGNALS)}",
                )
    if sorted(k.eviction_soft or {}) != sorted(k.eviction_soft_grace_period or {}):
        c.add(
            f"{path}.evictionSoft", "evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod"
        )
    hi, lo = k.image_gc_high_threshold_percent, k.image_gc_low_threshold_percent
    if hi is not None and lo is not None and hi <= lo:
        c.add(
            f"{path}.imageGCHighThresholdPercent",
            "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent",
        )
    if k.max_pods is not None and k.max_pods < 0:
        c.add(f"{path}.maxPods", "maxPods must be 0 or more")


def validate_pod(pod: Pod, c: Collector) -> None:
    """Shape checks for a cluster-state Pod (semantic pod validation is the scheduler's)."""
    at = pod.origin_path
    if not pod.metadata.name:
        c.add(at("metadata.name"), "a Pod needs metadata.name")
    for group, containers in (
        ("containers", pod.spec.containers),
        ("initContainers", pod.spec.init_containers),
    ):
        for i, ctr in enumerate(containers):
            for part, mapping in (("requests", ctr.resources.requests), ("limits", ctr.resources.limits)):
                for key, value in sorted(mapping.items()):
                    check_quantity(c, at(f"spec.{group}[{i}].resources.{part}.{key}"), value)
    for key, value in sorted(pod.spec.overhead.items()):
        check_quantity(c, at(f"spec.overhead.{key}"), value)


def check_mapping_quantities(c: Collector, path: str, mapping: Mapping[str, Any]) -> None:
    for key, value in sorted(mapping.items()):
        check_quantity(c, f"{path}.{key}", value)
