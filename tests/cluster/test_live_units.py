"""Units of the live read: list-page checks on any JSON (Hypothesis), the controller's settings,
the ClusterSnapshot record read back, env values dropped from every pod template."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright.cluster import load_cluster, snapshot_settings
from nodewright.cluster.controller import controller_settings, find_controller
from nodewright.cluster.kinds import BY_KIND, POD_TEMPLATE_AT, TABLE
from nodewright.cluster.live import _clean, _page_items
from nodewright.cluster.transport import Target
from nodewright.errors import InputError

POD = BY_KIND["Pod"]
TARGET = Target(server="https://api.example", kind="Pod", group="", resource="pods")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
list_like = st.fixed_dictionaries(
    {},
    optional={
        "kind": st.sampled_from(["PodList", "List", "SecretList", "Status"]) | json_values,
        "apiVersion": st.sampled_from(["v1", "v1beta1"]) | json_values,
        "items": st.lists(
            st.fixed_dictionaries(
                {}, optional={"kind": st.sampled_from(["Pod", "Secret"]), "metadata": json_values}
            )
            | json_values,
            max_size=4,
        )
        | json_values,
        "metadata": st.fixed_dictionaries({}, optional={"continue": json_values}) | json_values,
    },
)


@settings(max_examples=300, deadline=None)
@given(body=list_like | json_values)
def test_any_page_is_items_or_one_located_error(body: Any) -> None:
    """Whatever JSON a server sends, the page is a list of Pod mappings and a token, or an InputError
    naming the server and kind; never another exception, never a Secret through."""
    try:
        items, token = _page_items(body, POD, TARGET)
    except InputError as exc:
        assert exc.file == "https://api.example Pod"
        return
    assert all(isinstance(i, dict) and i.get("kind") in (None, "Pod") and "data" not in i for i in items)
    assert token is None or isinstance(token, str)


def _deployment(
    namespace: str, name: str, container: dict[str, Any], labels: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "metadata": {"namespace": namespace, "name": name, "labels": labels or {}},
        "spec": {"template": {"spec": {"containers": [{"name": "sidecar"}, container]}}},
    }


def test_flags_win_over_env_and_value_from_is_a_note() -> None:
    """Karpenter's options: a flag's default is its env variable (pkg/operator/options), so an explicit
    --flag in the container args wins."""
    container = {
        "name": "controller",
        "args": ["--feature-gates=NodeRepair=true", "--reserved-enis", "2"],
        "env": [
            {"name": "FEATURE_GATES", "value": "NodeRepair=false"},
            {"name": "RESERVED_ENIS", "value": "0"},
            {"name": "PREFERENCE_POLICY", "valueFrom": {"configMapKeyRef": {"name": "k", "key": "p"}}},
            {"name": "CLUSTER_CA_BUNDLE", "value": "c2VjcmV0"},
        ],
    }
    values, notes = controller_settings(_deployment("kube-system", "karpenter", container))
    assert values == {"featureGates": "NodeRepair=true", "reservedENIs": "2"}
    assert notes == ["Deployment kube-system/karpenter: PREFERENCE_POLICY comes from valueFrom; not recorded"]


def test_controller_is_found_where_the_chart_puts_it() -> None:
    container = {"name": "controller"}
    other = _deployment("default", "web", {"name": "web"})
    old_guide = _deployment("karpenter", "karpenter", container)
    renamed = _deployment("ops", "autoscaler", container, {"app.kubernetes.io/name": "karpenter"})
    assert find_controller([other, old_guide]) is old_guide
    assert find_controller([other, renamed]) is renamed
    assert find_controller([other]) is None
    assert find_controller([other, renamed], namespace="ops", name="autoscaler") is renamed
    assert find_controller([old_guide], name="karpenter") is None  # named: kube-system/karpenter only


@pytest.mark.parametrize("kind", sorted(POD_TEMPLATE_AT))
def test_env_values_are_dropped_from_every_pod_template(kind: str) -> None:
    spec = {"containers": [{"name": "c", "env": [{"name": "TOKEN", "value": "hunter2"}]}]}
    body: dict[str, Any] = {"metadata": {"name": "x"}}
    at = POD_TEMPLATE_AT[kind]
    node = body
    for key in at[:-1]:
        node = node.setdefault(key, {})
    node[at[-1]] = spec
    cleaned = _clean(body, kind, BY_KIND[kind].api_version)
    assert "hunter2" not in json.dumps(cleaned)
    assert "TOKEN" in json.dumps(cleaned)


def test_every_kind_with_a_pod_template_is_read() -> None:
    assert set(POD_TEMPLATE_AT) <= {k.kind for k in TABLE}


def test_record_of_wrong_shape_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    record = {
        "apiVersion": "nodewright.dev/v1alpha1",
        "kind": "ClusterSnapshot",
        "skippedKinds": "CapacityBuffer",
    }
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [record]}))
    with pytest.raises(InputError) as info:
        load_cluster(path)
    assert str(info.value).startswith(f"{path}:items[0].skippedKinds: expected a list")


def test_state_without_record_has_no_settings() -> None:
    state = load_cluster(Path(__file__).resolve().parents[2] / "stacks/examples/cluster.json")
    assert snapshot_settings(state) == {} and state.skipped_kinds == () and state.karpenter_controller is None
