"""Port of aws/karpenter-provider-aws v1.14.1 ``pkg/providers/instancetype/suite_test.go``
Context("NodeOverlay Preview Instance Pricing"): an instance type EC2 lists but no price list
prices (here t8i.small of the embedded aws:us-east-1 catalog, which the shipped table lacks)
becomes available when a NodeOverlay gives it a price, through
:func:`nodewright.catalog.overlay.overlay_catalogs`."""

from __future__ import annotations

from typing import Any

import builders

from nodewright.api.karpenter import NodePool
from nodewright.api.nodeoverlay import NodeOverlay
from nodewright.catalog import Catalog
from nodewright.catalog.overlay import overlay_catalogs, overlay_prices
from nodewright.settings import FeatureGates

ON = FeatureGates(node_overlay=True)
PREVIEW = "t8i.small"


def _overlay(name: str = "preview", **spec: Any) -> NodeOverlay:
    body = {
        "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [PREVIEW]}],
        **spec,
    }
    return NodeOverlay.model_validate(
        {
            "apiVersion": "karpenter.sh/v1alpha1",
            "kind": "NodeOverlay",
            "metadata": {"name": name},
            "spec": body,
        }
    )


def _available(catalog: Catalog, overlays: list[NodeOverlay], gates: FeatureGates) -> int:
    pool = NodePool.model_validate(builders.nodepool("default", node_class_ref=builders.AWS_NODECLASS_REF))
    types = list(catalog)
    out = overlay_catalogs(overlays, [pool], lambda _np: types, gates=gates).types_for(lambda _np: types)(
        pool
    )
    it = next(t for t in out if t.name == PREVIEW)
    assert it.offerings
    return sum(1 for o in it.offerings if o.available)


def test_offerings_become_available_when_an_overlay_prices_an_unpriced_type(us_east_1: Catalog) -> None:
    """It("should mark offerings as available when a NodeOverlay defines a price for an unpriced instance type")"""
    assert _available(us_east_1, [_overlay(price="98.32")], ON) > 0
    pool = NodePool.model_validate(builders.nodepool("default", node_class_ref=builders.AWS_NODECLASS_REF))
    types = list(us_east_1)
    out = overlay_catalogs([_overlay(price="98.32")], [pool], lambda _np: types, gates=ON).types[pool.name]
    it = next(t for t in out if t.name == PREVIEW)
    assert {o.price for o in it.offerings if o.available} == {98.32}
    assert it.requirements.get("karpenter.sh/capacity-type").has("on-demand")


def test_offerings_stay_unavailable_without_an_overlay(us_east_1: Catalog) -> None:
    """It("should not mark offerings as available for unpriced instance types without a NodeOverlay")"""
    assert _available(us_east_1, [], ON) == 0


def test_offerings_stay_unavailable_when_the_gate_is_disabled(us_east_1: Catalog) -> None:
    """It("should not mark offerings as available when NodeOverlay feature gate is disabled")"""
    assert _available(us_east_1, [_overlay(price="98.32")], FeatureGates()) == 0


def test_only_absolute_single_requirement_overlays_price_types() -> None:
    """offering.go ``GetOverlayPrice``: validated overlays with ``price`` and exactly one
    ``node.kubernetes.io/instance-type In`` requirement; the later name wins a type named twice."""
    two_reqs = NodeOverlay.model_validate(
        {
            "apiVersion": "karpenter.sh/v1alpha1",
            "kind": "NodeOverlay",
            "metadata": {"name": "two"},
            "spec": {
                "price": "1",
                "requirements": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [PREVIEW]},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                ],
            },
        }
    )
    overlays = [
        _overlay("b", price="2"),
        _overlay("a", price="3"),
        _overlay("adj", priceAdjustment="+1"),
        two_reqs,
    ]
    names = {o.name for o in overlays}
    assert overlay_prices(overlays, names) == {PREVIEW: 2.0}
    assert overlay_prices(overlays, names - {"b"}) == {PREVIEW: 3.0}
