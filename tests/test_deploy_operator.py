"""deploy/pulumi-operator-stack.yaml: a Pulumi Kubernetes Operator v2 setup that works.

* the Stack validates against the operator's own CRD schema (tests/data/deploy, provenance there),
  strictly: an unknown field is an error, as ``kubectl apply --validate=strict`` makes it;
* its ServiceAccount exists and holds ``system:auth-delegator`` (the operator's docs: docs/migration.md,
  "Service Account") plus RBAC for every Kubernetes object the program declares (read from the dev
  stack's preview), and Secrets only in the OSC namespace;
* its names match the workflow (.github/workflows/pulumi.yaml) and the project (Pulumi.yaml).
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy" / "pulumi-operator-stack.yaml"
SCHEMA = ROOT / "tests" / "data" / "deploy" / "pulumi.com_stacks.v1.schema.json.gz"


def _docs() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(DEPLOY.read_text()) if d]


def _one(kind: str) -> dict[str, Any]:
    (doc,) = [d for d in _docs() if d["kind"] == kind]
    return doc


def _strict(schema: Any) -> Any:
    """Unknown fields become errors where the CRD lists the properties (structural schemas prune them)."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if (
            "properties" in out
            and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")
        ):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    data = json.loads(gzip.decompress(SCHEMA.read_bytes()))
    assert (data["group"], data["kind"], data["version"]) == ("pulumi.com", "Stack", "v1")
    schema = _strict(data["openAPIV3Schema"])
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    return cls(schema)


def test_stack_validates_against_the_operator_crd(validator: jsonschema.protocols.Validator) -> None:
    stack = _one("Stack")
    assert stack["apiVersion"] == "pulumi.com/v1"
    errors = sorted(validator.iter_errors(stack), key=lambda e: list(e.path))
    assert not errors, [f"{'.'.join(map(str, e.path))}: {e.message}" for e in errors]


def test_a_typo_is_caught(validator: jsonschema.protocols.Validator) -> None:
    stack = copy.deepcopy(_one("Stack"))
    stack["spec"]["resyncFrequencySecond"] = 60
    assert any("resyncFrequencySecond" in e.message for e in validator.iter_errors(stack))
    stack = copy.deepcopy(_one("Stack"))
    stack["spec"]["resyncFrequencySeconds"] = "five minutes"
    assert any("is not of type 'integer'" in e.message for e in validator.iter_errors(stack))


def _bound_roles(sa: str, ns: str) -> list[tuple[str, str, str]]:
    """(binding kind, role kind, role name) of every binding naming the ServiceAccount."""
    out = []
    for d in _docs():
        if d["kind"] in ("ClusterRoleBinding", "RoleBinding") and any(
            s["kind"] == "ServiceAccount" and s["name"] == sa and s["namespace"] == ns for s in d["subjects"]
        ):
            out.append((d["kind"], d["roleRef"]["kind"], d["roleRef"]["name"]))
    return out


def _allows(rules: list[dict[str, Any]], group: str, resource: str, verb: str) -> bool:
    return any(group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"] for r in rules)


def test_service_account_and_rbac_cover_what_the_program_manages() -> None:
    stack = _one("Stack")
    sa, ns = stack["spec"]["serviceAccountName"], stack["metadata"]["namespace"]
    assert any(
        d["kind"] == "ServiceAccount" and d["metadata"] == {**d["metadata"], "name": sa, "namespace": ns}
        for d in _docs()
    )
    bound = _bound_roles(sa, ns)
    assert ("ClusterRoleBinding", "ClusterRole", "system:auth-delegator") in bound
    cluster_rules = [
        r
        for d in _docs()
        if d["kind"] == "ClusterRole"
        and ("ClusterRoleBinding", "ClusterRole", d["metadata"]["name"]) in bound
        for r in d["rules"]
    ]
    # Every Kubernetes object the dev stack declares (its real preview), with the verbs an apply needs.
    from nodewright.preview import preview

    doc = preview(stack="dev", cwd=ROOT).document
    kinds = {
        (r["inputs"]["apiVersion"], r["inputs"]["kind"])
        for r in doc["resources"]
        if r["type"].startswith("kubernetes:")
    }
    assert kinds, doc["summary"]
    plural = {"NodePool": "nodepools", "EC2NodeClass": "ec2nodeclasses", "Secret": "secrets"}
    for api_version, kind in sorted(kinds):
        group = api_version.split("/")[0] if "/" in api_version else ""
        if kind == "Secret":  # namespaced: only in the OSC namespace, never cluster-wide
            assert not _allows(cluster_rules, "", "secrets", "get")
            role = next(
                d
                for d in _docs()
                if d["kind"] == "Role" and ("RoleBinding", "Role", d["metadata"]["name"]) in bound
            )
            assert role["metadata"]["namespace"] == "kube-system"
            for verb in ("get", "create", "update", "patch", "delete"):
                assert _allows(role["rules"], "", "secrets", verb), verb
            continue
        for verb in ("get", "create", "update", "patch", "delete"):
            assert _allows(cluster_rules, group, plural[kind], verb), (group, kind, verb)
    # clusterState: live reads every kind of the snapshot, read-only.
    from nodewright.cluster.live import KINDS

    for kind, api_version, path in KINDS:
        group = api_version.split("/")[0] if "/" in api_version else ""
        assert _allows(cluster_rules, group, path.rsplit("/", 1)[1], "list"), kind


def test_names_match_the_workflow_and_the_project() -> None:
    stack = _one("Stack")
    workflow = yaml.safe_load((ROOT / ".github/workflows/pulumi.yaml").read_text())
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    stack_name = workflow["env"]["STACK"]
    assert stack["spec"]["stack"].split("/")[-1] == stack_name
    assert stack["metadata"]["name"] == f"{project['name']}-{stack_name}"
    assert stack["spec"]["serviceAccountName"] == f"{project['name']}-{stack_name}"
    assert (ROOT / project["stackConfigDir"] / f"Pulumi.{stack_name}.yaml").is_file()
    on = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert stack["spec"]["branch"] == on["push"]["branches"][0]
