"""Output helpers shared by the components (pulumi adapters only).

``pulumi.Output.all(**{})`` resolves to an empty *list*, not an empty dict, so a map of outputs
built that way breaks the moment it is empty (a NodeClass without a NodePool, an empty claims
file). :func:`output_map` is the one place that builds ``{key: Output}`` -> ``Output[dict]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi


def output_map(values: Mapping[str, pulumi.Input[Any]]) -> pulumi.Output[dict[str, Any]]:
    """``{key: value}`` as one output of a dict sorted by key; an empty mapping gives ``{}``."""
    if not values:
        return pulumi.Output.from_input({})
    out: pulumi.Output[dict[str, Any]] = pulumi.Output.all(**dict(values)).apply(
        lambda resolved: dict(sorted(dict(resolved).items()))
    )
    return out
