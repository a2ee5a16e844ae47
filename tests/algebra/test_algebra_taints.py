"""Taint toleration (Kubernetes ToleratesTaint) and Karpenter's messages (scenario 62)."""

from __future__ import annotations

from typing import Any

import pytest

from nodewright.algebra.taints import (
    PREFER_NO_SCHEDULE_TOLERATION,
    has_prefer_no_schedule,
    is_known_ephemeral_taint,
    is_tolerated,
    match_taint,
    merge_taints,
    taint_str,
    tolerates,
    tolerates_pod,
    tolerates_prefer_no_schedule,
    tolerates_taint,
    untolerated,
)
from nodewright.api.core import Pod, Taint, Toleration
from nodewright.api.karpenter import TemplateTaint

TAINT = Taint(key="test-key", value="test-value", effect="NoSchedule")


def tol(**kw: Any) -> Toleration:
    return Toleration(**kw)


@pytest.mark.parametrize(
    ("toleration", "ok"),
    [
        (tol(key="test-key", operator="Exists"), True),
        (tol(key="test-key", operator="Equal", value="test-value"), True),
        (tol(key="test-key", value="test-value"), True),  # empty operator means Equal
        (tol(key="test-key", operator="Equal"), False),  # Equal without value
        (tol(key="other-key", operator="Exists"), False),
        (tol(key="test-key", operator="Equal", value="other"), False),
        (tol(operator="Exists"), True),  # empty key + Exists tolerates everything
        (tol(key="test-key", operator="Exists", effect="NoSchedule"), True),
        (tol(key="test-key", operator="Exists", effect="NoExecute"), False),
        (tol(key="test-key", operator="Gt", value="1"), False),  # unsupported operator
    ],
)
def test_algebra_tolerates_taint(toleration: Toleration, ok: bool) -> None:
    assert tolerates_taint(toleration, TAINT) is ok


def test_algebra_tolerates_message() -> None:
    taints = [TAINT, Taint(key="gpu", effect="NoExecute")]
    assert tolerates(taints, []) == (
        "did not tolerate taint (taint=test-key=test-value:NoSchedule); did not tolerate taint (taint=gpu:NoExecute)"
    )
    assert tolerates(taints, [tol(key="gpu", operator="Exists")]) == (
        "did not tolerate taint (taint=test-key=test-value:NoSchedule)"
    )
    assert tolerates(taints, [tol(operator="Exists")]) is None
    assert tolerates([], []) is None


def test_algebra_prefer_no_schedule_counts() -> None:
    soft = Taint(key="soft", effect="PreferNoSchedule")
    assert tolerates([soft], []) == "did not tolerate taint (taint=soft:PreferNoSchedule)"
    assert tolerates([soft], [PREFER_NO_SCHEDULE_TOLERATION]) is None
    assert has_prefer_no_schedule([TAINT, soft]) and not has_prefer_no_schedule([TAINT])
    assert tolerates_prefer_no_schedule([PREFER_NO_SCHEDULE_TOLERATION])
    assert not tolerates_prefer_no_schedule([tol(key="soft", operator="Exists", effect="PreferNoSchedule")])


def test_algebra_is_tolerated_and_untolerated() -> None:
    assert is_tolerated([TAINT], [tol(key="test-key", operator="Exists")])
    assert not is_tolerated([TAINT], [])
    assert untolerated([TAINT], []) == [TAINT]


def test_algebra_template_taints_and_pod() -> None:
    template = TemplateTaint(key="test-key", value="test-value", effect="NoSchedule")
    pod = Pod.model_validate(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {
                "containers": [{"name": "c"}],
                "tolerations": [{"key": "test-key", "operator": "Exists"}],
            },
        }
    )
    assert tolerates_pod([template], pod) is None
    assert taint_str(template) == "test-key=test-value:NoSchedule"


def test_algebra_merge_taints() -> None:
    a = Taint(key="k", value="1", effect="NoSchedule")
    b = Taint(key="k", value="2", effect="NoSchedule")
    c = Taint(key="k", effect="NoExecute")
    assert match_taint(a, b) and not match_taint(a, c)
    assert merge_taints([a], [b, c]) == [a, c]


def test_algebra_known_ephemeral_taints() -> None:
    assert is_known_ephemeral_taint(Taint(key="node.kubernetes.io/not-ready", effect="NoSchedule"))
    assert is_known_ephemeral_taint(
        Taint(key="node.cloudprovider.kubernetes.io/uninitialized", value="true", effect="NoSchedule")
    )
    assert not is_known_ephemeral_taint(
        Taint(key="node.cloudprovider.kubernetes.io/uninitialized", effect="NoSchedule")
    )
    assert is_known_ephemeral_taint(Taint(key="readiness.k8s.io/network", effect="NoSchedule"))
    assert not is_known_ephemeral_taint(TAINT)
