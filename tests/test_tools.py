"""The developer tools under tools/ still produce what the repository ships."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_generate_cluster_reproduces_the_example_cluster_state() -> None:
    spec = importlib.util.spec_from_file_location("generate_cluster", ROOT / "tools" / "generate_cluster.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build() == (ROOT / "stacks" / "examples" / "cluster.json").read_text()


def _converter() -> object:
    spec = importlib.util.spec_from_file_location("convert", ROOT / "tools" / "convert_upstream_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_convert_upstream_tables_reads_the_generated_go_shapes(tmp_path: Path) -> None:
    """The converter behind nodewright/data/prices-us-gov-*.json, prices-cn-*.json and
    vpc-branch-enis.json, on snippets shaped like the provider's generated files."""
    import json

    conv = _converter()
    pricing = (
        "var InitialOnDemandPricesUSGov = map[string]map[ec2types.InstanceType]float64{\n"
        '\t// us-gov-east-1\n\t"us-gov-east-1": {\n\t\t// c5 family\n'
        '\t\t"c5.large": 0.102000, "c5.xlarge": 0.204000,\n\t},\n'
        '\t"us-gov-west-1": {\n\t\t"m5.large": 0.121000,\n\t},\n}\n'
    )
    written = conv.pricing(pricing, "v1.14.1", "pkg/x.go", tmp_path)  # type: ignore[attr-defined]
    assert [p.name for p in written] == ["prices-us-gov-east-1.json", "prices-us-gov-west-1.json"]
    east = json.loads(written[0].read_text())
    assert east["prices"] == {"c5.large": 0.102, "c5.xlarge": 0.204}
    assert east["source"] == "aws/karpenter-provider-aws v1.14.1 pkg/x.go"
    limits = (
        "var Limits = map[string]*VPCLimits{\n"
        '\t"a1.large": {\n\t\tInterface: 3,\n\t\tIsTrunkingCompatible:    true,\n\t\tBranchInterface:         9,\n\t},\n'
        '\t"t3.large": {\n\t\tIsTrunkingCompatible:    false,\n\t\tBranchInterface:         0,\n\t},\n}\n'
    )
    (out,) = conv.vpclimits(limits, "v1.14.1", "pkg/y.go", tmp_path)  # type: ignore[attr-defined]
    assert json.loads(out.read_text())["branchInterfaces"] == {"a1.large": 9}
    shipped = json.loads((ROOT / "nodewright" / "data" / "vpc-branch-enis.json").read_text())
    assert shipped["branchInterfaces"]["m5.large"] == 9 and "t3.large" not in shipped["branchInterfaces"]
