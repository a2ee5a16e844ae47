"""Cost advice for NodePools: a pool that lets NodeClaims grow into oversized types.

Advisory: the rule loads the instance-type catalog (policy config ``catalog``, default
``aws:us-east-1``, the embedded offline catalog) and asks :func:`nodewright.costplan.oversize.oversized`
which of the pool's types are larger than every cost-efficient one and far dearer per vCPU or GiB.
The saving it states is per unit from the catalog; ``nodewright plan`` measures it on a cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodewright.policy.resources import NODEPOOL_CR, ResourceView


def check_oversized_types(resource: ResourceView, config: Mapping[str, Any]) -> list[str]:
    if resource.type != NODEPOOL_CR:
        return []
    from pydantic import ValidationError

    from nodewright.api.karpenter import NodePool
    from nodewright.catalog import load_catalog
    from nodewright.catalog.loader import DEFAULT_SPEC
    from nodewright.costplan.oversize import DEFAULT_RATIO, oversized

    try:
        pool = NodePool.model_validate(dict(resource.props))
    except ValidationError:
        return []  # shape errors are other policies' business
    try:
        types = list(load_catalog(str(config.get("catalog") or DEFAULT_SPEC)))
    except Exception as exc:  # an unreadable catalog must not fail the pack
        return [f"{resource.name}: could not load the catalog for the oversized-type check: {exc}"]
    advice = oversized(pool, types, ratio=float(config.get("maxPriceRatio") or DEFAULT_RATIO))
    if advice is None:
        return []
    worst = advice.types[0]
    extra = 1 - advice.best_per_vcpu / worst.per_vcpu
    more = f" and {len(advice.types) - 1} more" if len(advice.types) > 1 else ""
    return [
        f"{resource.name}: NodeClaims may grow into {advice.describe(worst)}{more}, paying up to "
        f"{100 * extra:.0f}% more per vCPU than the pool's best offering; add the requirement "
        f"`{advice.requirement}` to spec.template.spec.requirements (`nodewright plan` measures the "
        "saving on a cluster state)"
    ]
