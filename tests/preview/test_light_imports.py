"""Provider packages imported by use (nodewright/preview/light_imports.py): in a fresh interpreter, the
classes the program uses come without their package's other modules, are the very classes a whole
import gives, and every other name of the package is still reachable (the package completes itself)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from nodewright.preview import light_imports

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
import pulumi_aws as aws, pulumi_kubernetes as k8s
from nodewright.preview.light_imports import PartialPackage, import_by_use
if sys.argv[1] == "partial":
    import_by_use()
out = {"partial": isinstance(aws.ec2, PartialPackage)}
lt = aws.ec2.LaunchTemplate
args = aws.ec2.LaunchTemplateBlockDeviceMappingArgs
secret = k8s.core.v1.Secret
out["loaded"] = sorted(m for m in sys.modules if m.startswith(("pulumi_aws.ec2.", "pulumi_kubernetes.core.v1.")))
m = sys.modules
out["same"] = [lt is m["pulumi_aws.ec2.launch_template"].LaunchTemplate,
               args is m["pulumi_aws.ec2._inputs"].LaunchTemplateBlockDeviceMappingArgs,
               secret is m["pulumi_kubernetes.core.v1.Secret"].Secret, aws.iam.InstanceProfile.__module__,
               callable(aws.ssm.get_parameter_output)]
out["enum"] = repr(aws.ec2.InstanceType.T3_MICRO)  # an enum of _enums.py: the package completes itself
out["names"] = sorted(n for n in dir(aws.ec2) if not n.startswith("_"))
out["vpc_is_module_class"] = aws.ec2.Vpc is sys.modules["pulumi_aws.ec2.vpc"].Vpc
print(json.dumps(out))
"""


def _probe(mode: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, mode], cwd=REPO, capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def test_classes_used_come_alone_and_are_the_whole_imports_classes() -> None:
    whole, partial = _probe("whole"), _probe("partial")
    assert partial["partial"] and not whole["partial"]
    loaded = set(partial["loaded"])  # type: ignore[arg-type]
    assert "pulumi_aws.ec2.launch_template" in loaded and "pulumi_kubernetes.core.v1.Secret" in loaded
    assert "pulumi_aws.ec2.vpc" not in loaded and "pulumi_kubernetes.core.v1.Pod" not in loaded
    assert len(loaded) < len(whole["loaded"]) / 10  # type: ignore[arg-type]
    assert partial["same"] == whole["same"] == [True, True, True, "pulumi_aws.iam.instance_profile", True]
    assert partial["enum"] == whole["enum"]
    assert partial["names"] == whole["names"]  # completed: every name of the whole package
    assert partial["vpc_is_module_class"] and whole["vpc_is_module_class"]


def test_the_installed_python_and_pulumi_have_what_it_needs() -> None:
    assert light_imports.missing_import_api() == []
