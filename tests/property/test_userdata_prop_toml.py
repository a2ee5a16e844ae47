"""Property: any TOML settings the user gives keep their non-kubernetes tables unchanged through Bottlerocket rendering."""

from __future__ import annotations

import logging
import tomllib
from typing import Any

import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nodewright.userdata import ClusterInfo, KubeletConfig, gotoml, render_bottlerocket, resolve_options

INFO = ClusterInfo(name="c", endpoint="https://c", ca_bundle="Y2E=", cidr="10.0.0.0/16", dns=("10.0.0.10",))

keys = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), min_size=1, max_size=8)
scalars = st.one_of(
    st.text(st.characters(exclude_categories=["Cs"]), max_size=12),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=True, width=64),
)
arrays = st.lists(scalars, max_size=4)


def tables(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    values: st.SearchStrategy[Any] = st.one_of(scalars, arrays)
    if depth > 0:
        values = st.one_of(
            values,
            st.deferred(lambda: tables(depth - 1)),
            st.lists(st.deferred(lambda: tables(depth - 1)), min_size=1, max_size=2),
        )
    return st.dictionaries(keys, values, max_size=4)


settings_tables = st.dictionaries(
    keys.filter(lambda k: k not in ("kubernetes", "bootstrap-commands")), tables(2), max_size=3
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kept=settings_tables, cloud_provider=st.one_of(st.none(), st.text(max_size=10)))
def test_kept_tables_round_trip(kept: dict[str, Any], cloud_provider: str | None) -> None:
    doc: dict[str, Any] = {"settings": dict(kept)}
    if cloud_provider is not None:
        doc["settings"]["kubernetes"] = {"cloud-provider": cloud_provider, "made-up-key": 1}
    user_toml = tomlkit.dumps(doc)
    assert tomllib.loads(user_toml) == doc  # the input really is that TOML
    options = resolve_options(
        family="Bottlerocket",
        info=INFO,
        labels={},
        capacity_type="spot",
        kubelet=KubeletConfig(max_pods=9),
        user_data=user_toml,
    )
    logging.getLogger("nodewright").disabled = True
    try:
        out = tomllib.loads(render_bottlerocket(options))
    finally:
        logging.getLogger("nodewright").disabled = False
    for name, table in kept.items():
        assert out["settings"][name] == table
    kube = out["settings"]["kubernetes"]
    assert kube["max-pods"] == 9
    assert "made-up-key" not in kube
    if cloud_provider is not None:
        assert kube["cloud-provider"] == cloud_provider


@settings(max_examples=150, deadline=None)
@given(doc=tables(3))
def test_go_toml_writer_is_valid_toml(doc: dict[str, Any]) -> None:
    assert tomllib.loads(gotoml.dumps(doc)) == doc
