"""Karpenter's settings as one value (nodewright/settings.py) and the CLI's one decorator for them.

The gate syntax is Kubernetes' MapStringBool as Karpenter parses it (kubernetes-sigs/karpenter
v1.14.1 ``pkg/operator/options/options.go`` ParseFeatureGates; ``options_validation_test.go`` /
``suite_test.go`` "should parse feature gates"-style cases): named gates override the defaults,
unnamed ones keep them. Deliberate difference: an unknown gate is an error here (Karpenter ignores it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nodewright.errors import InputError, UsageError
from nodewright.settings import GATE_NAMES, FeatureGates, KarpenterSettings, parse_feature_gates, resolve

REPO = Path(__file__).resolve().parents[1]
GATES = st.dictionaries(st.sampled_from(sorted(GATE_NAMES)), st.booleans())


def _text(gates: dict[str, bool]) -> str:
    return ",".join(f"{k}={str(v).lower()}" for k, v in gates.items())


@given(GATES)
def test_named_gates_override_and_the_others_keep_their_defaults(gates: dict[str, bool]) -> None:
    parsed = parse_feature_gates(_text(gates), source="<args>")
    default = FeatureGates()
    for name, attr in GATE_NAMES.items():
        assert getattr(parsed, attr) == gates.get(name, getattr(default, attr))


@given(GATES, st.sampled_from([" ", "", "  "]), st.sampled_from(["true", "True", "TRUE"]))
def test_spaces_case_and_empty_items_are_tolerated(gates: dict[str, bool], pad: str, true: str) -> None:
    text = ",".join(f"{pad}{k}{pad}={pad}{true if v else 'false'}{pad}" for k, v in gates.items()) + ",,"
    assert parse_feature_gates(text, source="<args>") == parse_feature_gates(_text(gates), source="<args>")


@given(GATES)
def test_as_string_round_trips(gates: dict[str, bool]) -> None:
    parsed = parse_feature_gates(_text(gates), source="<args>")
    assert parse_feature_gates(parsed.as_string(), source="<args>") == parsed
    assert parsed.enabled() == [n for n, a in GATE_NAMES.items() if getattr(parsed, a)]


@given(st.text(alphabet="abcdefgXYZ=,", max_size=30))
def test_any_text_parses_or_is_one_located_error(text: str) -> None:
    try:
        parse_feature_gates(text, source="<args>")
    except InputError as exc:
        assert exc.file == "<args>" and "\n" not in exc.message


def test_unknown_gate_names_the_closest() -> None:
    with pytest.raises(InputError, match="did you mean NodeRepair"):
        parse_feature_gates("NodeRepiar=true", source="<args>")
    with pytest.raises(InputError, match="must be true or false"):
        parse_feature_gates("NodeRepair=yes", source="<args>")


def test_precedence_flag_env_stack_snapshot_default() -> None:
    got = resolve(
        flags={"preference_policy": "Ignore", "feature_gates": "NodeRepair=true"},
        env={"PREFERENCE_POLICY": "Respect", "RESERVED_ENIS": "2", "FEATURE_GATES": "StaticCapacity=true"},
        stack={"reservedENIs": 5, "minValuesPolicy": "BestEffort", "featureGates": "NodeOverlay=true"},
        snapshot={"minValuesPolicy": "Strict", "vmMemoryOverheadPercent": 0.1},
    )
    assert got.preference_policy == "Ignore" and got.reserved_enis == 2
    assert got.min_values_policy == "BestEffort" and got.vm_memory_overhead_percent == 0.1
    assert (
        got.feature_gates.node_repair,
        got.feature_gates.static_capacity,
        got.feature_gates.node_overlay,
    ) == (
        True,
        True,
        True,
    )
    assert got.sources["preference_policy"] == "flag" and got.sources["reserved_enis"] == "env"
    assert resolve() == KarpenterSettings()


def test_command_line_errors_are_usage_errors_stack_errors_are_input_errors() -> None:
    with pytest.raises(UsageError, match="--reserved-enis"):
        resolve(flags={"reserved_enis": "-1"})
    with pytest.raises(UsageError, match="VM_MEMORY_OVERHEAD_PERCENT"):
        resolve(env={"VM_MEMORY_OVERHEAD_PERCENT": "7.5"})
    with pytest.raises(InputError) as info:
        resolve(stack={"ignoreDRARequests": "maybe"})
    assert not isinstance(info.value, UsageError) and "ignoreDRARequests" in info.value.message
    with pytest.raises(InputError, match="did you mean preferencePolicy"):
        resolve(stack={"preferencePolicies": "Ignore"})


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("FEATURE_GATES", "RESERVED_ENIS")} | env
    return subprocess.run(
        [sys.executable, "-m", "nodewright.cli", *args],
        capture_output=True,
        text=True,
        env=full,
        cwd=REPO,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["--feature-gates", "ReservedCapacty=false"], {}, "did you mean ReservedCapacity"),
        (["--reserved-enis", "two"], {}, "invalid --reserved-enis 'two'"),
        ([], {"RESERVED_ENIS": "-3"}, "invalid RESERVED_ENIS '-3'"),
        ([], {"FEATURE_GATES": "NodeRepair"}, "not Name=true|false"),
        (["--karpenter-version", "0.37.0"], {}, "unsupported Karpenter version '0.37.0'"),
    ],
)
@pytest.mark.parametrize("command", ["hash", "preview"])
def test_invalid_settings_exit_2_naming_the_setting(
    args: list[str], env: dict[str, str], named: str, command: str
) -> None:
    files = ["-f", str(REPO / "stacks/nodepools.yaml")] if command == "hash" else ["--stack", "dev"]
    res = _cli(command, *files, *args, **env)
    assert res.returncode == 2, res.stderr
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("error: ") and named in res.stderr


def _m5_large_pods(*args: str, **env: str) -> int:
    import json

    res = _cli("catalog", "list", "-o", "json", *args, **env)
    assert res.returncode == 0, res.stderr
    return int(next(it["maxPods"] for it in json.loads(res.stdout) if it["name"] == "m5.large"))


def test_reserved_enis_shape_the_catalog_from_flag_or_environment() -> None:
    """RESERVED_ENIS leaves ENIs out of max pods (aws/karpenter-provider-aws v1.14.1
    ``pkg/providers/instancetype/types.go`` ENILimitedPods): m5.large 3 ENIs x 10 IPs -> 29, with
    one reserved -> (3-1) x (10-1) + 2 = 20."""
    assert _m5_large_pods() == 29
    assert _m5_large_pods("--reserved-enis", "1") == 20
    assert _m5_large_pods(RESERVED_ENIS="1") == 20
    assert _m5_large_pods("--reserved-enis", "0", RESERVED_ENIS="1") == 29  # the flag wins


def test_stack_config_karpenter_map() -> None:
    from nodewright.stack import read_settings

    base = {
        "files": '["stacks/nodepools.yaml"]',
        "cluster": '{"clusterName": "c", "clusterEndpoint": "https://x", "caBundle": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClkyRXRZblZ1Wkd4bAotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="}',
    }
    got = read_settings(
        {**base, "karpenter": '{"featureGates": "NodeRepair=true", "reservedENIs": 2}'}, stack="t"
    )
    assert got.karpenter.feature_gates.node_repair and got.karpenter.reserved_enis == 2
    assert got.karpenter_dict()["version"] == "1.14.1" and got.karpenter_dict()["reservedENIs"] == 2
    with pytest.raises(InputError) as info:
        read_settings({**base, "karpenter": '{"minValuesPolicy": "Lenient"}'}, stack="t")
    assert info.value.path == "config.nodewright:karpenter" and "minValuesPolicy" in info.value.message


def test_preview_release_flag_disagreeing_with_the_stack_exits_2_naming_both() -> None:
    """stacks/Pulumi.dev.yaml says nodewright:karpenterVersion 1.14.1."""
    res = _cli("preview", "--stack", "dev", "--karpenter-version", "1.11.3")
    assert res.returncode == 2, res.stderr
    assert "--karpenter-version 1.11.3 disagrees with config.nodewright:karpenterVersion 1.14.1" in res.stderr


def test_a_gate_the_release_lacks_is_refused() -> None:
    """kubernetes-sigs/karpenter v1.11.2 options.go FeatureGates has no CapacityBuffer (v1.14.1 has)."""
    pools = str(REPO / "stacks/nodepools.yaml")
    assert _cli("hash", "-f", pools, "--feature-gates", "CapacityBuffer=true").returncode == 0
    old = _cli("hash", "-f", pools, "--karpenter-version", "1.11.3", FEATURE_GATES="CapacityBuffer=true")
    assert (
        old.returncode == 2
        and "error: <environment>: feature gate CapacityBuffer does not exist in Karpenter 1.11.3"
        in old.stderr
    )
    off = _cli(
        "hash", "-f", pools, "--karpenter-version", "1.11.3", "--feature-gates", "CapacityBuffer=false"
    )
    assert off.returncode == 0, off.stderr

    from nodewright.stack import read_settings

    base = {
        "files": '["stacks/nodepools.yaml"]',
        "cluster": '{"clusterName": "c", "clusterEndpoint": "https://x", "caBundle": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClkyRXRZblZ1Wkd4bAotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="}',
        "karpenter": '{"featureGates": "CapacityBuffer=true"}',
    }
    assert read_settings(base, stack="t").karpenter.feature_gates.capacity_buffer
    with pytest.raises(InputError) as info:
        read_settings({**base, "karpenterVersion": "1.11.3"}, stack="t")
    assert info.value.path == "config.nodewright:karpenter" and "CapacityBuffer" in info.value.message
