"""Branch ENIs per instance type: the ``vpc.amazonaws.com/pod-eni`` capacity (security groups for pods).

EC2 does not publish which types support ENI trunking nor their branch-ENI count; Karpenter ships
them as a generated table (aws/karpenter-provider-aws v1.14.1
``pkg/providers/instancetype/zz_generated.vpclimits.go``: ``IsTrunkingCompatible`` and
``BranchInterface``). ``nodewright/data/vpc-branch-enis.json`` holds the trunking-compatible
types of that table (converted by ``tools/convert_upstream_tables.py``; provenance in the file).

Boundary: the table only; capacity is computed in :mod:`.aws`.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources as importlib_resources
from typing import Final

POD_ENI: Final = "vpc.amazonaws.com/pod-eni"
_FILE: Final = "vpc-branch-enis.json"


@cache
def _table() -> dict[str, int]:
    text = (importlib_resources.files("nodewright.data") / _FILE).read_text(encoding="utf-8")
    return {str(k): int(v) for k, v in json.loads(text)["branchInterfaces"].items()}


def branch_interfaces(instance_type: str) -> int:
    """``awsPodENI``: the branch ENIs of a trunking-compatible type, else 0."""
    return _table().get(instance_type, 0)
