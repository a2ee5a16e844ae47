"""Timing of the EC2NodeClass hash and the launch-template spec (figures go to README "Performance").

Run: ``PYTHONPATH=. python bench/launch_templates.py``. No assertions; prints microseconds per call.
"""

from __future__ import annotations

import time
from pathlib import Path

import yaml

from nodewright.api import EC2NodeClass
from nodewright.drift import nodeclass_hash
from nodewright.userdata import ClusterInfo
from nodewright.userdata.launch_template import launch_template_spec

VECTORS = yaml.safe_load(
    (Path(__file__).parents[1] / "tests/data/drift/ec2nodeclass-hash-vectors.yaml").read_text()
)


def per_call(fn: object, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()  # type: ignore[operator]
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    body = {"spec": VECTORS["base"]}
    print(
        f"nodeclass_hash (upstream base vector): {per_call(lambda: nodeclass_hash(body, ca_bundle='x'), 2000):.0f} µs"
    )
    nc = EC2NodeClass.model_validate(
        {
            "metadata": {"name": "hpc"},
            "spec": {
                "role": "r",
                "amiSelectorTerms": [{"alias": "al2023@latest"}],
                "subnetSelectorTerms": [{"id": "s"}],
                "securityGroupSelectorTerms": [{"id": "g"}],
                "networkInterfaces": [
                    {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
                    {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"},
                ],
                "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "1T"}}],
            },
        }
    )
    info = ClusterInfo(
        name="c", endpoint="https://c", ca_bundle="Y2E=", cidr="10.0.0.0/16", dns=("10.0.0.10",)
    )

    def spec() -> object:
        return launch_template_spec(nc, cluster=info, nodepool="p", user_data="x", capacity_type="spot")

    print(f"launch_template_spec (2 interfaces, 1 volume): {per_call(spec, 2000):.0f} µs")


if __name__ == "__main__":
    main()
