"""Karpenter ``karpenter.sh/v1alpha1`` NodeOverlay: price and capacity changes for instance types.

The shape of kubernetes-sigs/karpenter v1.14.1 ``pkg/apis/v1alpha1/nodeoverlay.go``; the CRD
(schema, CEL) and ``RuntimeValidate`` are applied by :mod:`nodewright.crd` before this model is
built. What an overlay does to instance types is :mod:`nodewright.catalog.overlay`.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from nodewright.api.base import KubeModel, StrictModel, TopLevel
from nodewright.api.core import Condition, ObjectMeta, QuantityValue

API_VERSION: Final = "karpenter.sh/v1alpha1"
VALIDATION_SUCCEEDED: Final = "ValidationSucceeded"


class OverlayRequirement(StrictModel):
    key: str
    operator: str = ""
    values: list[str] = Field(default_factory=list)


class NodeOverlaySpec(StrictModel):
    requirements: list[OverlayRequirement] = Field(default_factory=list)
    price_adjustment: str | None = None
    price: str | None = None
    capacity: dict[str, QuantityValue] | None = None
    weight: int | None = None


class NodeOverlayStatus(KubeModel):
    conditions: list[Condition] = Field(default_factory=list)


class NodeOverlay(TopLevel):
    """A NodeOverlay. ``spec`` is strict; ``metadata``/``status`` as the server returns them."""

    api_version: Literal["karpenter.sh/v1alpha1"] = API_VERSION
    kind: Literal["NodeOverlay"] = "NodeOverlay"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: NodeOverlaySpec
    status: NodeOverlayStatus = Field(default_factory=NodeOverlayStatus)

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def weight(self) -> int:
        return self.spec.weight or 0
