"""The CEL environment (Kubernetes extension functions nodewright adds, compile-once, failures that
are never silent passes) and the release table (--karpenter-version, nodewright:karpenterVersion)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nodewright import crd
from nodewright.cli import main
from nodewright.crd.celrules import Rule, RuleCompileError, compile_rule
from nodewright.crd.releases import CRD_FILES
from nodewright.crd.schema import crd as compiled_crd
from nodewright.errors import InputError


def rule(text: str) -> Rule:
    return compile_rule({"rule": text, "message": "m"}, where="test")


@pytest.mark.parametrize(
    ("text", "value", "passed"),
    [
        # Kubernetes regex library (k8s.io/apiserver pkg/cel/library/regex.go): find / findAll
        ("self.find('^([^/]+)') == 'karpenter.sh'", "karpenter.sh/x", True),
        ("self.find('[0-9]+') == ''", "abc", True),
        ("self.findAll('[0-9]') == ['1', '2', '3']", "a1b2c3", True),
        ("self.findAll('[0-9]', 2) == ['1', '2']", "a1b2c3", True),
        ("self.findAll('[0-9]', -1).size() == 3", "a1b2c3", True),
        # strings extension (cel-go ext.Strings, enabled in Kubernetes)
        ("self.split('@')[1] == 'latest'", "al2023@latest", True),
        ("self.lowerAscii() == 'al2023@latest'", "AL2023@latest", True),
        ("self.indexOf('@') == 6", "al2023@latest", True),
        # standard library pieces Karpenter's rules use
        ("self.matches('^[a-zA-Z0-9]+@.+$')", "al2@v1", True),
        ("self.all(x, !self[x].startsWith('-'))", {"cpu": "-1"}, False),
        (
            "self.filter(x, has(x.rootVolume) ? x.rootVolume == true : false).size() <= 1",
            [{"rootVolume": True}] * 2,
            False,
        ),
        ("int(self) >= 0", "9223372036854775807", True),
        # Kubernetes quantity library (k8s.io/apiserver pkg/cel/library/quantity.go)
        ("isQuantity(self)", "1.5Gi", True),
        ("isQuantity(self)", "1.5.3Gi", False),
        ("quantity(self).isLessThan(quantity('2Gi'))", "1Gi", True),
        ("quantity(self).isGreaterThan(quantity('1'))", "500m", False),
        ("quantity(self).compareTo(quantity('1k')) == 0", "1000", True),
        ("quantity(self) == quantity('1000m')", "1", True),
        ("quantity(self).asInteger() == 2", "2", True),
        ("quantity(self).isInteger()", "500m", False),
        ("quantity(self).asApproximateFloat() > 0.4", "500m", True),
        ("quantity(self).sign() == -1", "-1", True),
        ("quantity(self).add(quantity('500m')) == quantity('1500m')", "1", True),
        ("quantity(self).sub(1) == quantity('0')", "1", True),
    ],
)
def test_kubernetes_cel_functions(text: str, value: object, passed: bool) -> None:
    assert rule(text).evaluate(value)[0] is passed


def test_find_uses_re2_like_ascii_classes() -> None:
    assert rule("self.find('[0-9]+') == ''").evaluate("٣")[0] is True
    assert rule(r"self.find('\\d+') == ''").evaluate("٣")[0] is True


def test_an_evaluation_error_is_a_failure_with_the_reason() -> None:
    ok, err = rule("int(self) >= 0").evaluate("9223372036854775808")
    assert not ok and "int" in err
    ok, err = rule("quantity(self).isInteger()").evaluate("x")
    assert not ok and "invalid quantity" in err
    ok, err = rule("quantity(self).asInteger() > 0").evaluate("1500m")
    assert not ok and "losing precision" in err
    ok, err = rule("self.missing == 1").evaluate({"other": 1})
    assert not ok and err


def test_an_unknown_function_does_not_compile() -> None:
    with pytest.raises(RuleCompileError, match="does not compile"):
        rule("self.quantityOf() == 1")


def test_every_shipped_rule_compiles_once() -> None:
    for kind in ("NodePool", "NodeClaim", "EC2NodeClass", "OperatingSystemConfig"):
        assert compiled_crd(kind) is compiled_crd(kind)  # cached: compiled once per process


def test_releases_table_and_unknown_version() -> None:
    assert crd.supported_versions() == ["1.11.3", "1.14.1"]
    rel = crd.release("v1.14.1")
    assert (rel.nodepool_hash_version, rel.ec2nodeclass_hash_version) == ("v3", "v5")
    old = crd.release("1.11.3")
    assert (old.nodepool_hash_version, old.ec2nodeclass_hash_version) == ("v3", "v4")
    with pytest.raises(
        InputError, match=r"unsupported Karpenter version '1\.2\.0'; supported: 1\.11\.3, 1\.14\.1"
    ):
        crd.release("1.2.0")


def test_every_release_folder_has_its_crds_and_provenance() -> None:
    root = Path(crd.__file__).resolve().parents[1] / "data" / "crds"
    for version in crd.supported_versions():
        folder = root / crd.release(version).crd_folder
        provenance = (folder / "PROVENANCE").read_text()
        rel = crd.release(version)
        for kind, name in CRD_FILES.items():
            if rel.ships(kind):
                assert (folder / name).is_file() and name in provenance
            else:  # a kind the release does not have (e.g. CapacityBuffer before v1.14)
                assert not (folder / name).exists()


def test_cli_karpenter_version_option(tmp_path: Path) -> None:
    path = tmp_path / "np.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "karpenter.sh/v1",
                "kind": "NodePool",
                "metadata": {"name": "a"},
                "spec": {
                    "template": {
                        "spec": {"nodeClassRef": {"group": "g", "kind": "k", "name": "n"}, "requirements": []}
                    }
                },
            }
        )
    )
    ok = CliRunner().invoke(main, ["validate", "-f", str(path), "--karpenter-version", "1.14.1"])
    assert ok.exit_code == 0, ok.output
    bad = CliRunner().invoke(main, ["hash", "-f", str(path), "--karpenter-version", "0.37.0"])
    assert bad.exit_code == 2
    assert "unsupported Karpenter version '0.37.0'; supported: 1.11.3, 1.14.1" in bad.output


def test_stack_setting_karpenter_version() -> None:
    from nodewright.stack import read_settings

    base = {
        "files": '["stacks/nodepools.yaml"]',
        "cluster": '{"clusterName": "c", "clusterEndpoint": "https://x", "caBundle": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClkyRXRZblZ1Wkd4bAotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="}',
    }
    assert read_settings({**base, "karpenterVersion": "v1.14.1"}, stack="t").karpenter_version == "1.14.1"
    with pytest.raises(InputError) as info:
        read_settings({**base, "karpenterVersion": "9.9.9"}, stack="t")
    assert info.value.path == "config.nodewright:karpenterVersion"
    assert "supported: 1.11.3, 1.14.1" in info.value.message


def test_field_path_reason_and_skipped_rules_are_reported() -> None:
    """A rule's fieldPath and reason show in the line; a rule the API server would skip (the value
    has a type error inside) and that cannot evaluate is named as not checked, never passed."""
    from nodewright.crd.admission import _Walk
    from nodewright.crd.schema import Schema

    inner = Schema(type="integer")
    s = Schema(
        type="object",
        properties={"a": inner, "b": Schema(type="string")},
        rules=(
            compile_rule(
                {
                    "rule": "self.b != 'x'",
                    "message": "b must not be x",
                    "fieldPath": ".b",
                    "reason": "FieldValueForbidden",
                },
                where="t",
            ),
            compile_rule({"rule": "self.a > 1", "message": "a too small"}, where="t"),
        ),
    )
    w = _Walk("f.yaml", "")
    w.walk({"a": 5, "b": "x"}, s, "spec")
    assert [(p.path, p.message.split(";")[0]) for p in w.problems] == [
        ("spec.b", "b must not be x [FieldValueForbidden]")
    ]
    w = _Walk("f.yaml", "")
    w.walk({"a": "5", "b": "y"}, s, "spec")
    assert [p.path for p in w.problems] == ["spec.a"] and w.skipped


def test_each_release_validates_with_its_own_crds(tmp_path: Path) -> None:
    """spec.cpuOptions exists in aws/karpenter-provider-aws v1.14.1's EC2NodeClass CRD, not in
    v1.11.3's: the same file is valid for one release and an unknown field for the other."""
    import subprocess
    import sys

    path = tmp_path / "nc.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "karpenter.k8s.aws/v1",
                "kind": "EC2NodeClass",
                "metadata": {"name": "x"},
                "spec": {
                    "role": "R",
                    "amiSelectorTerms": [{"alias": "al2023@latest"}],
                    "subnetSelectorTerms": [{"tags": {"a": "b"}}],
                    "securityGroupSelectorTerms": [{"tags": {"a": "b"}}],
                    "cpuOptions": {"nestedVirtualization": "enabled"},
                },
            }
        )
    )

    def validate(version: str) -> subprocess.CompletedProcess[str]:
        args = [
            sys.executable,
            "-m",
            "nodewright.cli",
            "validate",
            "-f",
            str(path),
            "--karpenter-version",
            version,
        ]
        return subprocess.run(args, capture_output=True, text=True, check=False)

    assert validate("1.14.1").returncode == 0
    old = validate("1.11.3")
    assert old.returncode == 1 and 'spec.cpuOptions: unknown field "cpuOptions"' in old.stderr
