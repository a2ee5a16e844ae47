"""Policies: pure rules, and the real pulumi_policy analyzer over compliant and violating stacks."""

from __future__ import annotations

import base64

import pytest
from click.testing import CliRunner
from pulumi_helpers import STACKS, run_stack

from nodewright import crd
from nodewright.cli import main
from nodewright.errors import InputErrors
from nodewright.policy import POLICIES, ResourceView, resolve_config
from nodewright.policy.safety import check_imdsv2, check_user_data_safe
from nodewright.preview.analyzer import analyze
from nodewright.preview.pack import build_policies

LT = "aws:ec2/launchTemplate:LaunchTemplate"


def _lt(**props: object) -> ResourceView:
    return ResourceView(type=LT, name="lt", props=props)


def test_imdsv2_rule() -> None:
    assert check_imdsv2(_lt(metadataOptions={"httpTokens": "required"}), {}) == []
    assert "httpTokens=optional" in check_imdsv2(_lt(metadataOptions={"httpTokens": "optional"}), {})[0]
    assert check_imdsv2(_lt(), {})  # no metadata options at all = IMDSv1 allowed
    hop = _lt(metadataOptions={"httpTokens": "required", "httpPutResponseHopLimit": 3})
    assert check_imdsv2(hop, {"maxHopLimit": 2}) and not check_imdsv2(hop, {"maxHopLimit": 3})


def test_user_data_rule_size_and_credentials() -> None:
    def ud(text: str) -> ResourceView:
        return _lt(userData=base64.b64encode(text.encode()).decode())

    assert check_user_data_safe(ud("#!/bin/bash\necho hi\n"), {}) == []
    msgs = check_user_data_safe(ud("export AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP\n"), {})
    assert len(msgs) == 1 and "AWS access key id" in msgs[0] and "AKIAABCD" not in msgs[0]
    assert "over the 16384-byte limit" in check_user_data_safe(ud("x" * 16385), {})[0]
    assert check_user_data_safe(ud("token <<BOOTSTRAP_TOKEN>>"), {}) == []


def test_compliant_stacks_have_no_violations() -> None:
    for stack in ("karpenter",):
        assert analyze(run_stack(stack).registrations) == []


def test_fleet_reports_drifted_claim_as_advisory() -> None:
    vs = analyze(run_stack("fleet").registrations)
    assert [(v.policy, v.enforcement, v.resource) for v in vs] == [
        ("nodeclaim-hash-current", "advisory", "capacity-default-0002")
    ]


@pytest.mark.parametrize(
    ("stack", "policy", "resources"),
    [
        ("bad-hash", "nodepool-hash-current", ["default-nodepool"]),
        (
            "bad-imds",
            "imdsv2-required",
            ["default-default-pods29", "default-default-pods58", "default-ec2nodeclass"],
        ),
    ],
)
def test_violating_stacks_are_mandatory(stack: str, policy: str, resources: list[str]) -> None:
    vs = analyze(run_stack(stack).registrations)
    mandatory = [v for v in vs if v.enforcement == "mandatory"]
    assert {v.policy for v in mandatory} == {policy}
    assert sorted(v.resource for v in mandatory) == resources


def test_enforcement_configurable_through_pack_config() -> None:
    regs = run_stack("bad-imds").registrations
    vs = analyze(regs, config={"imdsv2-required": {"enforcementLevel": "advisory"}})
    assert vs and all(v.enforcement == "advisory" for v in vs)
    assert analyze(regs, config={"imdsv2-required": "disabled"}) == []
    assert all(v.enforcement == "advisory" for v in analyze(regs, config={"all": "advisory"}))


def test_policy_config_validation_collects_every_problem() -> None:
    with pytest.raises(InputErrors) as err:
        resolve_config({"imdsv2-required": {"maxHopLimit": "two", "bogus": 1}, "no-such-policy": "mandatory"})
    lines = err.value.lines()
    assert len(lines) == 3
    assert any("no policy named 'no-such-policy'" in line for line in lines)
    resolved = resolve_config(None)
    assert resolved["imdsv2-required"].properties == {"maxHopLimit": 2}
    assert resolved["nodeclaim-hash-current"].enforcement == "advisory"


def test_pack_matches_catalogue() -> None:
    pack = build_policies()
    assert [p.name for p in pack] == [p.name for p in POLICIES]


@pytest.mark.parametrize(
    ("stack", "policy"),
    [
        ("bad-hash", "nodepool-hash-current"),
        ("bad-imds", "imdsv2-required"),
    ],
)
def test_cli_exits_1_naming_the_policy(stack: str, policy: str) -> None:
    result = CliRunner().invoke(main, ["preview", "--stack-file", str(STACKS / f"Pulumi.{stack}.yaml")])
    assert result.exit_code == 1, result.output
    assert f"[mandatory]  {policy}" in result.output


def test_preview_fails_on_an_object_the_cluster_rejects_naming_file_and_field() -> None:
    """The program loads the stack's files through the CRDs: a restricted label stops the preview."""
    result = CliRunner().invoke(main, ["preview", "--stack-file", str(STACKS / "Pulumi.bad-label.yaml")])
    assert result.exit_code == 1, result.output
    assert (
        "bad-label.yaml:documents[0].spec.template.metadata.labels[karpenter.sh/custom]: "
        'label domain "karpenter.sh" is restricted'
    ) in result.output


def _pool_cr(**spec_changes: object) -> ResourceView:
    spec: dict[str, object] = {
        "template": {
            "metadata": {"labels": {"karpenter.sh/custom": "x", "node-role.kubernetes.io/worker": ""}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "d"},
                "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
            },
        }
    }
    spec.update(spec_changes)
    return ResourceView(
        type="kubernetes:karpenter.sh/v1:NodePool", name="p", props={"metadata": {"name": "p"}, "spec": spec}
    )


def test_restricted_labels_policy_follows_v1_9() -> None:
    """kubernetes-sigs/karpenter#2586 (v1.9): kubernetes.io / k8s.io labels are no longer restricted."""
    from nodewright.policy.labels_rules import check_restricted_labels

    msgs = check_restricted_labels(_pool_cr(), {})
    assert len(msgs) == 1 and "karpenter.sh/custom" in msgs[0]


def test_crd_valid_policy_names_resource_and_field() -> None:
    from nodewright.policy.crd_rules import check_crd_valid

    msgs = check_crd_valid(_pool_cr(weight="10"), {}, release=crd.default_release())
    assert any(m.startswith("p: spec.weight: must be of type integer") for m in msgs)
    assert any("spec.template.metadata.labels[karpenter.sh/custom]" in m for m in msgs)
    assert not any("node-role.kubernetes.io" in m for m in msgs)


def test_cli_exit_0_when_compliant() -> None:
    result = CliRunner().invoke(
        main, ["preview", "--stack-file", str(STACKS / "Pulumi.karpenter.yaml"), "-o", "json"]
    )
    assert result.exit_code == 0, result.output


def test_user_data_must_register_pool_labels_and_taints() -> None:
    from nodewright.policy.labels_rules import check_user_data_registers

    pool = ResourceView(
        type="kubernetes:karpenter.sh/v1:NodePool",
        name="p",
        props={
            "metadata": {"name": "p"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"team": "web"}},
                    "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]},
                }
            },
        },
    )

    def lt(text: str) -> ResourceView:
        return _lt(userData=base64.b64encode(text.encode()).decode(), tags={"karpenter.sh/nodepool": "p"})

    good = "--node-labels=team=web --register-with-taints=a:NoSchedule,karpenter.sh/unregistered:NoExecute"
    assert check_user_data_registers([pool, lt(good)], {}) == []
    ((_, msg),) = check_user_data_registers([pool, lt("#!/bin/bash\necho hi")], {})
    assert "label team=web" in msg and "taint a:NoSchedule" in msg
    # Since Karpenter v1.3 (kubernetes-sigs/karpenter#1991) the unregistered taint is not required.
    assert "karpenter.sh/unregistered" not in msg
    assert (
        check_user_data_registers(
            [pool, lt("--node-labels=team=web --register-with-taints=a:NoSchedule")], {}
        )
        == []
    )
    # fleet mode: the NodePool component's template summary stands in for the CR
    comp = ResourceView(
        type="nodewright:index:NodePool",
        name="p",
        props={"nodePool": "p", "template": pool.props["spec"]["template"]},
    )
    assert len(check_user_data_registers([comp, lt("#!/bin/bash")], {})) == 1
