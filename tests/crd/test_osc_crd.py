"""Gardener's OperatingSystemConfig CRD (shipped, gardener/gardener v1.149.3) joins the OSC loader:
what the API server rejects and the model would coerce is reported, with file and field."""

from __future__ import annotations

import pytest

from nodewright.api.documents import documents_from_text
from nodewright.errors import NodewrightError
from nodewright.osc.loading import load_osc_documents

HEAD = "apiVersion: extensions.gardener.cloud/v1alpha1\nkind: OperatingSystemConfig\n"


def lines(text: str) -> list[str]:
    with pytest.raises(NodewrightError) as info:
        load_osc_documents(documents_from_text(HEAD + text, file="o.yaml"))
    return info.value.lines()


def test_quoted_boolean_is_rejected_as_the_api_server_does() -> None:
    out = lines(
        "metadata: {name: t, namespace: ns}\nspec: {type: ubuntu, purpose: provision, units: [{name: a.service, enable: 'yes'}]}"
    )
    assert out == [
        'o.yaml:spec.units[0].enable: must be of type boolean, got string "yes"; remove the quotes'
    ]


def test_object_name_must_be_a_dns_subdomain() -> None:
    out = lines("metadata: {name: Bad_Name, namespace: ns}\nspec: {type: ubuntu, purpose: provision}")
    assert len(out) == 1 and out[0].startswith('o.yaml:metadata.name: invalid name "Bad_Name"')


def test_a_valid_osc_loads() -> None:
    text = HEAD + "metadata: {name: t, namespace: ns}\nspec: {type: ubuntu, purpose: provision}\n"
    (loaded,) = load_osc_documents(documents_from_text(text, file="o.yaml"))
    assert loaded.osc.spec.purpose == "provision"
