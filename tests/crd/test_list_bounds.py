"""``maxItems`` is a closed bound: a list of exactly ``maxItems`` items is admitted, one more is
refused (apiextensions-apiserver's OpenAPI ``MaxItems`` check: ``len > maxItems`` fails). The
NodePool CRD bounds ``spec.disruption.budgets`` at 50 (karpenter.sh_nodepools.yaml, v1.14.1)."""

from __future__ import annotations

from builders import nodepool

from nodewright.crd import admit_object


def _with_budgets(n: int) -> dict[str, object]:
    body = nodepool()
    body["spec"]["disruption"] = {"budgets": [{"nodes": f"{i % 100}%"} for i in range(n)]}  # type: ignore[index]
    return body


def _problems(n: int) -> list[str]:
    return [str(p) for p in admit_object(_with_budgets(n), kind="NodePool").problems]


def test_exactly_max_items_is_admitted() -> None:
    assert not [p for p in _problems(50) if "budgets" in p and "items" in p]


def test_one_more_than_max_items_is_refused() -> None:
    assert any("spec.disruption.budgets" in p and "has 51 items, at most 50" in p for p in _problems(51))
