"""Loading and validating user files: shapes, defaults, and one clear line per problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nodewright.api import load_objects
from nodewright.cli import main
from nodewright.errors import InputError, InputErrors, NodewrightError

ROOT = Path(__file__).resolve().parents[2]

NODEPOOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
"""


def write(tmp_path: Path, text: str, name: str = "in.yaml") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def errors_of(path: str) -> list[str]:
    with pytest.raises(NodewrightError) as info:
        load_objects([path])
    return info.value.lines()


def test_defaults_applied_as_karpenter_crd(tmp_path: Path) -> None:
    objs = load_objects([write(tmp_path, NODEPOOL)])
    np = objs.nodepools[0]
    assert np.spec.template.spec.expire_after == "720h"
    assert np.spec.disruption.consolidation_policy == "WhenEmptyOrUnderutilized"
    assert np.spec.disruption.consolidate_after == "0s"
    assert [b.nodes for b in np.spec.disruption.budgets] == ["10%"]


def test_ec2nodeclass_metadata_defaults(tmp_path: Path) -> None:
    text = """
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: R
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
"""
    nc = load_objects([write(tmp_path, text)]).nodeclasses[0]
    mo = nc.spec.metadata_options
    assert (mo.http_endpoint, mo.http_protocol_ipv6, mo.http_put_response_hop_limit, mo.http_tokens) == (
        "enabled",
        "disabled",
        1,
        "required",
    )
    assert nc.ami_family() == "AL2023"


def test_example_stack_loads_unchanged() -> None:
    objs = load_objects([ROOT / "stacks/nodepools.yaml", ROOT / "stacks/nodeclasses.yaml"])
    assert [np.name for np in objs.nodepools] == ["default", "gpu"]
    assert [nc.ami_family() for nc in objs.nodeclasses] == ["AL2023", "Bottlerocket"]


def test_list_and_json_unpacked(tmp_path: Path) -> None:
    import yaml

    body = {"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(NODEPOOL)]}
    objs = load_objects([write(tmp_path, json.dumps(body), "in.json")])
    assert objs.nodepools[0].name == "default"
    assert objs.nodepools[0].origin_path("spec") == "items[0].spec"


def test_multi_document_paths(tmp_path: Path) -> None:
    text = NODEPOOL + "---\n" + NODEPOOL.replace("name: default}", "name: other}").replace("amd64", "arm")
    objs = load_objects([write(tmp_path, text)])
    assert [np.origin_path() for np in objs.nodepools] == ["documents[0]", "documents[1]"]


def test_bad_yaml_names_line(tmp_path: Path) -> None:
    lines = errors_of(write(tmp_path, "kind: NodePool\nspec: [unclosed\n"))
    assert len(lines) == 1
    assert "in.yaml" in lines[0] and "invalid YAML at line" in lines[0]


def test_wrong_operator_with_hint(tmp_path: Path) -> None:
    lines = errors_of(write(tmp_path, NODEPOOL.replace("operator: In", "operator: in")))
    assert lines == [
        f'{tmp_path}/in.yaml:spec.template.spec.requirements[0].operator: unsupported value "in"; '
        'use one of Gte, Lte, In, NotIn, Exists, DoesNotExist, Gt, Lt (typo of "In"?)'
    ]


def test_bad_quantity(tmp_path: Path) -> None:
    lines = errors_of(write(tmp_path, NODEPOOL + "  limits: {memory: 1.5.3Gi}\n"))
    assert len(lines) == 1
    assert lines[0].startswith(
        f'{tmp_path}/in.yaml:spec.limits[memory]: invalid value "1.5.3Gi": use a Kubernetes quantity'
    )


def test_restricted_label(tmp_path: Path) -> None:
    text = NODEPOOL.replace("  template:\n", "  template:\n    metadata: {labels: {karpenter.sh/team: a}}\n")
    lines = errors_of(write(tmp_path, text))
    assert len(lines) == 1
    assert "spec.template.metadata.labels[karpenter.sh/team]" in lines[0]
    assert 'label domain "karpenter.sh" is restricted' in lines[0]


def test_restricted_requirement_hostname(tmp_path: Path) -> None:
    lines = errors_of(write(tmp_path, NODEPOOL.replace("kubernetes.io/arch", "kubernetes.io/hostname")))
    assert 'label "kubernetes.io/hostname" is restricted' in lines[0]


def test_every_problem_reported(tmp_path: Path) -> None:
    text = NODEPOOL.replace("operator: In", "operator: Gt").replace(
        "      requirements:", "      expireAfter: 30x\n      requirements:"
    )
    text += "  weight: 500\n  disruption: {consolidationPolicy: WhenEmty, surprise: 1}\n"
    with pytest.raises(InputErrors) as info:
        load_objects([write(tmp_path, text)])
    paths = sorted(p.path for p in info.value.problems)
    assert paths == [
        "spec.disruption.consolidateAfter",  # the CRD requires it once disruption is given
        "spec.disruption.consolidationPolicy",
        "spec.disruption.surprise",
        "spec.template.spec.expireAfter",
        "spec.template.spec.requirements[0]",  # the failing entry of the CEL rule on the list
        "spec.weight",
    ]


def test_unknown_field_hint(tmp_path: Path) -> None:
    lines = errors_of(write(tmp_path, NODEPOOL.replace("nodeClassRef", "nodeClassReff")))
    assert any('unknown field "nodeClassReff" (typo of "nodeClassRef"?)' in line for line in lines)


def test_missing_template(tmp_path: Path) -> None:
    text = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: x}\nspec: {}\n"
    lines = errors_of(write(tmp_path, text))
    assert lines == [f'{tmp_path}/in.yaml:spec.template: required field "template" is missing']


def test_v1beta1_rejected_with_migration_hint(tmp_path: Path) -> None:
    lines = errors_of(write(tmp_path, NODEPOOL.replace("karpenter.sh/v1", "karpenter.sh/v1beta1")))
    assert "karpenter.sh/v1beta1" in lines[0] and "migrate" in lines[0]


def test_unknown_kind_warns_not_fails(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    text = NODEPOOL + "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
    objs = load_objects([write(tmp_path, text)])
    assert len(objs.nodepools) == 1
    assert "ignoring unknown kind Widget" in caplog.text


def test_duplicate_names_rejected(tmp_path: Path) -> None:
    lines = errors_of(write(tmp_path, NODEPOOL + "---\n" + NODEPOOL))
    assert 'duplicate NodePool "default"' in lines[0]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_objects([tmp_path / "nope.yaml"])


@pytest.mark.parametrize(
    ("mutation", "expected"),
    [
        (("alias: al2023@latest", "alias: al2099@latest"), "family is not supported, must be one of"),
        (
            ("role: R", "role: R\n  instanceProfile: P"),
            "must specify exactly one of ['role', 'instanceProfile']",
        ),
        (("role: R", "role: R\n  metadataOptions: {httpTokens: optionall}"), 'unsupported value "optionall"'),
        (("role: R", "role: R\n  kubelet: {kubeReserved: {gpu: 1}}"), "valid keys for kubeReserved"),
        (("role: R", "role: R\n  tags: {karpenter.sh/nodepool: x}"), "restricted tag"),
    ],
)
def test_ec2nodeclass_rules(tmp_path: Path, mutation: tuple[str, str], expected: str) -> None:
    text = """
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: R
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
""".replace(*mutation)
    assert any(expected in line for line in errors_of(write(tmp_path, text)))


def test_cli_validate_one_line_per_problem(tmp_path: Path) -> None:
    path = write(tmp_path, NODEPOOL.replace("operator: In", "operator: in"))
    result = CliRunner().invoke(main, ["validate", "-f", path, "-o", "json"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f'error: {path}:spec.template.spec.requirements[0].operator: unsupported value "in"; '
        'use one of Gte, Lte, In, NotIn, Exists, DoesNotExist, Gt, Lt (typo of "In"?)'
    ]
    assert "Traceback" not in result.output


def test_cli_validate_ok() -> None:
    result = CliRunner().invoke(
        main,
        [
            "validate",
            "-f",
            str(ROOT / "stacks/nodepools.yaml"),
            "-f",
            str(ROOT / "stacks/nodeclasses.yaml"),
            "-o",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["objects"] == {"EC2NodeClass": 2, "NodePool": 2}


def test_unknown_kind_warning_hints_a_typo(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    load_objects([write(tmp_path, NODEPOOL + "---\n" + NODEPOOL.replace("kind: NodePool", "kind: NodePol"))])
    assert "ignoring unknown kind NodePol 'default' (typo of \"NodePool\"?)" in caplog.text


def _pod(name: str, cpu: object = "1") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": "Pending"},
    }


def test_pods_of_one_shape_are_built_as_one_by_one(tmp_path: Path) -> None:
    """Pods repeating a spec/status share its validated model; each equals the pod built alone."""
    from nodewright.api.core import Pod

    bodies = [_pod("a"), _pod("b"), _pod("c", "2")]
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": bodies}))
    pods = load_objects([path]).pods
    alone = [Pod.model_validate(b) for b in bodies]
    assert [p.model_dump() for p in pods] == [p.model_dump() for p in alone]
    assert [(p.model_fields_set, p.spec.model_fields_set) for p in pods] == [
        (p.model_fields_set, p.spec.model_fields_set) for p in alone
    ]
    assert pods[0].spec is pods[1].spec and pods[0].spec is not pods[2].spec
    assert pods[1].origin_path() == "items[1]" and pods[1].origin_file == str(path)


def test_a_bad_pod_among_alike_ones_is_reported_as_alone(tmp_path: Path) -> None:
    bodies = [_pod("a"), {**_pod("b"), "spec": {"containers": "no"}}]
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": bodies}))
    with pytest.raises(NodewrightError) as err:
        load_objects([path])
    assert "items[1]" in str(err.value) and "containers" in str(err.value)
