"""The planted bugs of the mutation check (tools/mutate.py): one-line, behaviour-changing edits to
the core, each with the tests that must notice it.

``find`` must occur exactly once in ``file``; ``area`` is ``nodewright`` for nodewright's own
features and ``karpenter`` for ports of upstream behaviour. When code moves, move its mutant: a stale
one fails the run.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str
    area: str
    file: str
    find: str
    replace: str
    tests: tuple[str, ...]
    what: str


def _m(name: str, area: str, file: str, find: str, replace: str, tests: str, what: str) -> Mutant:
    return Mutant(name, area, file, find, replace, tuple(tests.split()), what)


MUTANTS: tuple[Mutant, ...] = (
    # -- nodewright's own features ----------------------------------------------------------------
    _m(
        "cost-trades-a-pod",
        "nodewright",
        "nodewright/costplan/strategy.py",
        'if set(g_doc["podErrors"]) <= k_failed and g_doc["summary"]["hourlyCost"] < k_cost:',
        'if g_doc["summary"]["hourlyCost"] < k_cost:',
        "tests/costplan",
        "the cost strategy takes a cheaper plan that leaves a pod unscheduled",
    ),
    _m(
        "cost-not-cheaper",
        "nodewright",
        "nodewright/costplan/strategy.py",
        'and g_doc["summary"]["hourlyCost"] < k_cost:',
        'and g_doc["summary"]["hourlyCost"] <= k_cost + 1000:',
        "tests/scheduling/test_cost_plan.py",
        "the cost strategy takes a plan dearer than Karpenter's",
    ),
    _m(
        "claims-zone-optional",
        "nodewright",
        "nodewright/scheduling/claimsfile.py",
        'REQUIRED_LAUNCH_KEYS: Final = ("instanceType", "zone", "capacityType")',
        'REQUIRED_LAUNCH_KEYS: Final = ("instanceType", "capacityType")',
        "tests/scheduling/test_claimsfile_invariants.py",
        "a claims file NodeClaim without launch.zone is accepted",
    ),
    _m(
        "claims-default-strategy",
        "nodewright",
        "nodewright/scheduling/claimsfile.py",
        '.get("strategy") or "karpenter")',
        '.get("strategy") or "cost")',
        "tests/scheduling/test_claimsfile_invariants.py",
        "a claims file without metadata.strategy counts as a cost plan",
    ),
    _m(
        "restricted-no-subdomains",
        "nodewright",
        "nodewright/policy/labels_rules.py",
        'any(dom == d or dom.endswith("." + d) for d in extra)',
        "any(dom == d for d in extra)",
        "tests/policy",
        "extraRestrictedDomains stop covering subdomains",
    ),
    _m(
        "redact-github-token",
        "nodewright",
        "nodewright/redact.py",
        'r"\\bgh[pousr]_[A-Za-z0-9]{36,}\\b"',
        'r"\\bgh[pousr]_[A-Za-z0-9]{40,}\\b"',
        "tests/test_redaction_shapes.py",
        "GitHub tokens of 36 characters are no longer redacted",
    ),
    _m(
        "redact-short-password",
        "nodewright",
        "nodewright/redact.py",
        "(?P<s>[^\\s'\\\"<>\\[\\]]{6,})",
        "(?P<s>[^\\s'\\\"<>\\[\\]]{9,})",
        "tests/test_redaction_shapes.py",
        "passwords shorter than 9 characters are no longer redacted",
    ),
    _m(
        "replace-namespace-as-update",
        "nodewright",
        "nodewright/preview/diff.py",
        '_K8S_IDENTITY: Final = frozenset({"apiVersion", "kind", "metadata.name", "metadata.namespace"})',
        '_K8S_IDENTITY: Final = frozenset({"apiVersion", "kind", "metadata.name"})',
        "tests/preview",
        "a namespace change is shown as an update, not a replace",
    ),
    _m(
        "replace-zone-as-update",
        "nodewright",
        "nodewright/preview/diff.py",
        '            "availabilityZone",\n',
        '            "availability_zone",\n',
        "tests/preview",
        "an instance's availability-zone change is shown as an update, not a replace",
    ),
    _m(
        "comment-limit",
        "nodewright",
        "nodewright/preview/comment.py",
        "GITHUB_COMMENT_LIMIT: Final = 65536",
        "GITHUB_COMMENT_LIMIT: Final = 70000",
        "tests/preview",
        "the PR comment may exceed GitHub's 65,536 characters",
    ),
    _m(
        "budget-percent-rounds-down",
        "karpenter",
        "nodewright/drift/rollout.py",
        "return math.ceil(int(nodes[:-1]) * total / 100)",
        "return int(nodes[:-1]) * total // 100",
        "tests/drift",
        "a percentage disruption budget rounds down instead of up",
    ),
    # -- ports of Karpenter behaviour ---------------------------------------------------------------
    _m(
        "nodepool-order-tiebreak",
        "karpenter",
        "nodewright/scheduling/plan.py",
        "by_name = sorted(usable, key=lambda np: np.name, reverse=True)",
        "by_name = sorted(usable, key=lambda np: np.name)",
        "tests/scheduling/test_nodepool_order.py",
        "equal-weight NodePools are tried in alphabetical order",
    ),
    _m(
        "nodepool-order-weight",
        "karpenter",
        "nodewright/scheduling/plan.py",
        "return sorted(by_name, key=lambda np: -(np.spec.weight or 0))",
        "return sorted(by_name, key=lambda np: np.spec.weight or 0)",
        "tests/scheduling/test_nodepool_order.py",
        "lighter NodePools are tried first",
    ),
    _m(
        "instance-type-wait-dropped",
        "karpenter",
        "nodewright/drift/detect.py",
        "if claim.created is not None and now - claim.created <= INSTANCE_TYPE_CHECK_MIN_AGE:",
        "if False:",
        "tests/drift/test_instance_type_age_gate.py",
        "InstanceTypeNotFound no longer waits an hour",
    ),
    _m(
        "instance-type-wait-boundary",
        "karpenter",
        "nodewright/drift/detect.py",
        "now - claim.created <= INSTANCE_TYPE_CHECK_MIN_AGE",
        "now - claim.created < INSTANCE_TYPE_CHECK_MIN_AGE",
        "tests/drift/test_instance_type_age_gate.py",
        "a NodeClaim exactly one hour old is already checked",
    ),
    _m(
        "max-items-off-by-one",
        "karpenter",
        "nodewright/crd/admission.py",
        "if s.max_items is not None and n > s.max_items:",
        "if s.max_items is not None and n >= s.max_items:",
        "tests/crd/test_list_bounds.py",
        "a list of exactly maxItems is refused",
    ),
    _m(
        "custom-ami-first-device",
        "karpenter",
        "nodewright/catalog/overhead.py",
        "last = bdms[-1].volume_size",
        "last = bdms[0].volume_size",
        "tests/catalog/test_custom_ephemeral_storage.py",
        "Custom-AMI ephemeral storage is read from the first device",
    ),
    _m(
        "kube-reserved-memory",
        "karpenter",
        "nodewright/catalog/overhead.py",
        "MEMORY: (11 * pods + 255) * MI * MILLI,",
        "MEMORY: (11 * pods + 256) * MI * MILLI,",
        "tests/catalog",
        "kube-reserved memory is 1 MiB too high",
    ),
    _m(
        "reserved-enis-ignored",
        "karpenter",
        "nodewright/catalog/overhead.py",
        "usable = max(max_interfaces - reserved_enis, 0)",
        "usable = max(max_interfaces, 0)",
        "tests/catalog",
        "reserved ENIs no longer lower max pods",
    ),
    _m(
        "vm-overhead-rounding",
        "karpenter",
        "nodewright/catalog/overhead.py",
        "overhead_mib = math.ceil(float(value) * overhead_percent / 1024 / 1024)",
        "overhead_mib = math.floor(float(value) * overhead_percent / 1024 / 1024)",
        "tests/catalog",
        "the VM memory overhead rounds down",
    ),
    _m(
        "eviction-percent-rounding",
        "karpenter",
        "nodewright/catalog/overhead.py",
        "return math.ceil(capacity / 100 * _percentage(signal)) * MILLI",
        "return math.floor(capacity / 100 * _percentage(signal)) * MILLI",
        "tests/catalog",
        "a percentage eviction threshold rounds down",
    ),
    _m(
        "toleration-effect",
        "karpenter",
        "nodewright/algebra/taints.py",
        "if toleration.effect and toleration.effect != taint.effect:",
        "if False:",
        "tests/algebra tests/scheduling/test_sched_suite_nodes.py",
        "a toleration tolerates taints of any effect",
    ),
    _m(
        "toleration-equal-value",
        "karpenter",
        "nodewright/algebra/taints.py",
        'return (toleration.value or "") == (taint.value or "")',
        "return True",
        "tests/algebra tests/scheduling/test_sched_suite_nodes.py",
        "an Equal toleration ignores the value",
    ),
    _m(
        "hostname-spread-skew",
        "karpenter",
        "nodewright/scheduling/topologygroup.py",
        "if counts.get(host, 0) + add <= self.max_skew:",
        "if counts.get(host, 0) + add <= self.max_skew + 1:",
        "tests/scheduling/test_topo_plan_spread.py tests/scheduling/test_topo_topology.py",
        "hostname spread allows one more pod than maxSkew",
    ),
    _m(
        "spread-skew-limit",
        "karpenter",
        "nodewright/scheduling/topologygroup.py",
        "limit = self.max_skew + minimum - add",
        "limit = self.max_skew + minimum",
        "tests/scheduling/test_topo_plan_spread.py tests/scheduling/test_topo_topology.py",
        "zonal spread ignores the pod being placed",
    ),
    _m(
        "max-instance-types",
        "karpenter",
        "nodewright/scheduling/plan.py",
        "MAX_INSTANCE_TYPES: Final = 600",
        "MAX_INSTANCE_TYPES: Final = 60",
        "tests/scheduling/test_nodeclaim_type_cap.py tests/scheduling/test_sched_instance_selection.py",
        "a NodeClaim lists at most 60 instance types instead of 600",
    ),
    _m(
        "al2023-karpenter-config-first",
        "karpenter",
        "nodewright/userdata/al2023.py",
        '    entries.append(Part(headers=(("Content-Type", NODE_CONFIG),), body=config))\n    _check(entries)',
        '    entries.insert(0, Part(headers=(("Content-Type", NODE_CONFIG),), body=config))\n    _check(entries)',
        "tests/userdata",
        "AL2023: Karpenter's NodeConfig comes before the user's parts (it must come last to win)",
    ),
    _m(
        "hash-version-mismatch-drifts",
        "karpenter",
        "nodewright/drift/detect.py",
        "if h is None or v is None or v != owner_version:",
        "if h is None or v is None:",
        "tests/drift",
        "a NodeClaim stamped with another hash version is drifted instead of re-stamped",
    ),
    _m(
        "go-duration-hour",
        "karpenter",
        "nodewright/goduration.py",
        'b"h": 3600 * 1_000_000_000,',
        'b"h": 3660 * 1_000_000_000,',
        "tests/drift/test_drift_goduration.py",
        "Go durations count an hour as 61 minutes",
    ),
    _m(
        "min-values-not-enforced",
        "karpenter",
        "nodewright/scheduling/nodeclaim.py",
        "    if kept and reqs.has_min_values():",
        "    if False:",
        "tests/scheduling",
        "minValues is never checked",
    ),
    _m(
        "requirements-negative-forgiven",
        "karpenter",
        "nodewright/algebra/requirements.py",
        "self.negative: Final = operator in (NOT_IN, DOES_NOT_EXIST)",
        "self.negative: Final = operator in (NOT_IN,)",
        "tests/algebra",
        "Intersects no longer forgives two DoesNotExist requirements",
    ),
)
