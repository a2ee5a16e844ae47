"""One owner per domain fact: every layer that uses a fact gets the same answer (these tests fail if
a copy creeps back and diverges).

AMI-family resolution (aws/karpenter-provider-aws v1.14.1 ``pkg/apis/v1/ec2nodeclass.go``
``AMIFamily()``/``amiFamilyFromAlias``), the ``metadataOptions`` CRD default, EC2's 16384-byte
user-data limit (``pkg/providers/launchtemplate/metrics.go``), label keys, volume sizes
(``pkg/providers/launchtemplate/launchtemplate.go`` ``volumeSize``, suite_test "should round up
for more than 1 GiB" case: 200G is 187 GiB) and the claims file format.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from nodewright import labels
from nodewright.api import amifamily
from nodewright.api.ec2nodeclass import EC2NodeClass, MetadataOptions
from nodewright.drift import nodeclass_hash
from nodewright.scheduling.claimsfile import claims_document, dump_claims, load_claims
from nodewright.scheduling.plandoc import PlanDocument, PlannedLaunch, PlannedNodeClaim
from nodewright.scheduling.planrender import empty_summary
from nodewright.stack import ami as stack_ami
from nodewright.stack import build as stack_build
from nodewright.userdata import nodeclass_options
from nodewright.userdata.launch import options_for


def _spec(**extra: Any) -> dict[str, Any]:
    return {
        "role": "KarpenterNodeRole",
        "amiSelectorTerms": [{"alias": "AL2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
        **extra,
    }


def _nodeclass(**extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": _spec(**extra),
    }


@pytest.mark.parametrize("alias", ["AL2023@latest", "al2023@latest", "Al2023@v20240625"])
def test_an_upper_case_alias_is_al2023_in_every_layer(alias: str) -> None:
    spec = _spec(amiSelectorTerms=[{"alias": alias}])
    assert amifamily.ami_family(spec) == "AL2023"
    # api model
    assert EC2NodeClass.model_validate({"spec": spec}).ami_family() == "AL2023"
    # drift: the hash covers the resolved family, so it equals the hash with amiFamily spelled out
    # (amiFamily itself is hash:"ignore")
    assert nodeclass_hash({"spec": spec}) == nodeclass_hash({"spec": {**spec, "amiFamily": "AL2023"}})
    assert nodeclass_hash({"spec": spec}) != nodeclass_hash({"spec": {**spec, "amiFamily": "Custom"}})
    # catalog options (userdata resolves them for the catalog)
    assert nodeclass_options({"spec": spec}).family == "AL2023"


def test_the_user_data_renderer_and_the_stack_plan_use_the_same_resolution() -> None:
    from nodewright.api.karpenter import NodePool
    from nodewright.userdata import ClusterInfo

    nc = EC2NodeClass.model_validate(_nodeclass())
    pool = NodePool.model_validate(
        {
            "metadata": {"name": "default"},
            "spec": {
                "template": {
                    "spec": {
                        "nodeClassRef": {
                            "group": "karpenter.k8s.aws",
                            "kind": "EC2NodeClass",
                            "name": "default",
                        },
                        "requirements": [],
                    }
                }
            },
        }
    )
    info = ClusterInfo(name="c", endpoint="https://example.com", ca_bundle="Y2E=", dns=("10.100.0.10",))
    family, _ = options_for(nc, pool, info, instance_type_pods=29)
    assert family == "AL2023"
    # the stack plan and drift call the owner itself, not a copy
    assert stack_build.ami_family is amifamily.ami_family
    from nodewright.drift import nodeclasshash

    assert nodeclasshash.ami_family is amifamily.ami_family


def test_metadata_option_defaults_have_one_owner() -> None:
    default = dict(amifamily.DEFAULT_METADATA_OPTIONS)
    assert MetadataOptions().model_dump(by_alias=True) == default
    assert stack_ami.metadata_options({"spec": {}}) == default
    assert stack_ami.metadata_options({"spec": {"metadataOptions": {"httpPutResponseHopLimit": 2}}}) == {
        **default,
        "httpPutResponseHopLimit": 2,
    }
    # drift applies the same default: an explicit default hashes like an absent one
    spec = _spec()
    assert nodeclass_hash({"spec": spec}) == nodeclass_hash({"spec": {**spec, "metadataOptions": default}})


def test_the_user_data_limit_has_one_owner() -> None:
    from nodewright.osc.render import USER_DATA_LIMIT
    from nodewright.policy.safety import USER_DATA_MAX_BYTES as POLICY_LIMIT
    from nodewright.userdata.dispatch import MAX_BYTES, WARN_BYTES

    assert amifamily.USER_DATA_MAX_BYTES == 16384
    assert MAX_BYTES == USER_DATA_LIMIT == POLICY_LIMIT == amifamily.USER_DATA_MAX_BYTES
    assert WARN_BYTES == amifamily.USER_DATA_WARN_BYTES == 16384 * 9 // 10


def test_label_keys_are_not_redefined_in_the_catalog() -> None:
    from nodewright.catalog import aws

    for name in ("ZONE_ID", "INSTANCE_ACCELERATOR_NAME", "INSTANCE_ACCELERATOR_COUNT"):
        assert not hasattr(aws, name), f"catalog.aws redefines labels.{name}"
    assert labels.ZONE_ID == "topology.k8s.aws/zone-id"


@pytest.mark.parametrize(
    ("size", "gib"), [("200G", 187), ("200Gi", 200), ("4G", 4), ("2G", 2), ("20Gi", 20), (None, None)]
)
def test_volume_sizes_round_up_to_gib_as_the_provider_does(size: str | None, gib: int | None) -> None:
    """Upstream ``pkg/providers/launchtemplate/suite_test.go``: 200G -> 187, 200Gi -> 200, 4G -> 4, 2G -> 2."""
    assert stack_ami.volume_size_gib(size) == gib


def test_default_block_devices_agree_with_the_catalog_math() -> None:
    from nodewright.catalog import overhead

    for family in amifamily.AMI_FAMILIES:
        devices = amifamily.default_block_device_mappings(family)
        assert overhead.ephemeral_device(family) == (devices[-1]["deviceName"] if devices else None)


def test_claims_file_round_trips(tmp_path: Path) -> None:
    plan_doc = PlanDocument(
        node_claims=(
            PlannedNodeClaim(
                name="default-abcde",
                node_pool="default",
                node_class="default",
                instance_types=("m5.large",),
                launch=PlannedLaunch(
                    instance_type="m5.large", zone="us-east-1a", capacity_type="on-demand", price=0.096
                ),
                labels={},
                requests={},
                pods=(),
            ),
        ),
        existing_nodes=(),
        pod_errors={},
        summary=empty_summary(0),
    )
    doc = claims_document(plan_doc, catalog="aws:us-east-1", hashes={"default": "123"})
    path = tmp_path / "claims.yaml"
    path.write_text(dump_claims(doc))
    [claim] = load_claims(path)
    assert claim["nodePoolHash"] == "123" and claim["launch"]["zone"] == "us-east-1a"


def test_validation_admits_only_lower_case_alias_families_as_the_crd() -> None:
    """aws/karpenter-provider-aws v1.14.1 ``pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml``:
    ``self.split('@')[0] in ['al2','al2023',...]``. Resolution stays lenient for raw objects that
    skip validation (a live cluster's, a drift input), so every layer still agrees on AL2023."""
    from nodewright.crd import admit_object

    problems = admit_object(_nodeclass(), kind="EC2NodeClass").problems
    assert [p.path for p in problems] == ["spec.amiSelectorTerms[0].alias"], problems
    ok = admit_object(_nodeclass(amiSelectorTerms=[{"alias": "al2023@latest"}]), kind="EC2NodeClass")
    assert ok.problems == []


# -- one definition per public name, one module per fact ---------------------------------------
_PACKAGE = Path(__file__).resolve().parent.parent / "nodewright"

# Names every CLI module defines by convention (the click command and the entry point).
_CONVENTIONAL: frozenset[str] = frozenset({"command", "main"})
# Duplicates whose both definitions sit in modules being reworked on other branches; the rename
# (e.g. stack's PoolHealth -> PoolHealthView, stack.build.nodepool_hash -> the drift owner) lands at
# merge. An entry that is no longer a duplicate fails the test below, so this list only shrinks.
_PENDING: frozenset[str] = frozenset()


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (str(p.relative_to(_PACKAGE.parent)), ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted(_PACKAGE.rglob("*.py"))
    ]


def _public_definitions() -> dict[str, set[str]]:
    """Public top-level function and class names -> the modules defining them (a module's
    ``typing.overload`` stubs count once)."""
    owners: dict[str, set[str]] = {}
    for module, tree in _modules():
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and not (
                node.name.startswith("_")
            ):
                owners.setdefault(node.name, set()).add(module)
    return owners


def test_no_two_modules_define_the_same_public_name() -> None:
    duplicates = {
        name: sorted(modules)
        for name, modules in _public_definitions().items()
        if len(modules) > 1 and name not in _CONVENTIONAL | _PENDING
    }
    assert not duplicates, f"rename the less canonical one or import the owner: {duplicates}"


def test_the_pending_duplicates_are_still_duplicates() -> None:
    owners = _public_definitions()
    resolved = sorted(name for name in _PENDING if len(owners.get(name, ())) < 2)
    assert not resolved, f"remove {resolved} from _PENDING: each has one definition now"


def _string_constants(tree: ast.Module) -> set[str]:
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_the_default_catalog_is_spelled_in_one_module() -> None:
    from nodewright.catalog.loader import DEFAULT_SPEC

    spelled = [module for module, tree in _modules() if DEFAULT_SPEC in _string_constants(tree)]
    assert spelled == ["nodewright/catalog/loader.py"], spelled


def test_label_syntax_is_compiled_in_one_module() -> None:
    """Kubernetes' qualified-name and label-value rules are compiled once (crd.k8svalidation)."""
    alphabet = "[A-Za-z0-9][-A-Za-z0-9_.]*"
    compiling = []
    for module, tree in _modules():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("compile", "match", "fullmatch", "search")
                and any(isinstance(a, ast.Constant) and alphabet in str(a.value) for a in node.args)
            ):
                compiling.append(module)
    assert sorted(set(compiling)) == ["nodewright/crd/k8svalidation.py"], compiling


def test_nodewright_tag_keys_live_with_the_label_keys() -> None:
    tags = {labels.AMI_FAMILY_TAG, labels.NODECLAIM_TAG}
    spelled = sorted(module for module, tree in _modules() if tags & _string_constants(tree))
    assert spelled == ["nodewright/labels.py"], spelled


def _docstrings(tree: ast.Module) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def test_label_keys_are_spelled_only_in_labels() -> None:
    """Every ``prefix/name`` key :mod:`nodewright.labels` defines is a literal there and nowhere else
    under nodewright/ (prose in docstrings aside)."""
    keys = {v for k, v in vars(labels).items() if k.isupper() and isinstance(v, str) and "/" in v}
    spelled: dict[str, list[str]] = {}
    for module, tree in _modules():
        if module == "nodewright/labels.py":
            continue
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in keys and id(node) not in docs:
                spelled.setdefault(str(node.value), []).append(module)
    assert not spelled, spelled
