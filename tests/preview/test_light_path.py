"""The preview's light path (nodewright/preview/light.py) against pulumi's full mock path: the same
registrations byte for byte (inputs with secret markers, parents, dependencies, options), the same
stack outputs and invokes, and every property of every resource resolving to the same value, known
and secret flags when read (the light path derives them only when read)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
from pulumi import resource as pulumi_resource
from pulumi_helpers import STACKS

from nodewright.preview import light
from nodewright.preview.runner import ProgramRun, load_stack, run_program

REPO = Path(__file__).resolve().parents[2]
STACK_FILES = [
    REPO / "stacks" / "Pulumi.dev.yaml",
    REPO / "stacks" / "Pulumi.fleet.yaml",
    *(
        STACKS / f"Pulumi.{name}.yaml"
        for name in ("karpenter", "secrets", "lt-options", "empty-claims", "no-osc", "upstream-custom-family")
    ),
]


def _fingerprint(run: ProgramRun) -> Any:
    regs = [
        (
            r.type,
            r.name,
            r.urn,
            r.parent,
            r.custom,
            r.object.SerializeToString(deterministic=True),
            json.dumps(r.raw()),  # the key order too (the report's and -o json's)
            r.protect,
            r.dependencies,
            r.provider,
        )
        for r in run.registrations
    ]
    outputs = {k: (v.value, v.secret, v.known) for k, v in run.outputs.items()}
    invokes = [(i.token, i.args, i.synthesized) for i in run.invokes]
    return regs, outputs, invokes, run.notes


def _plain(value: Any) -> Any:
    if isinstance(value, pulumi.Resource):
        return ("resource", value._name)
    if isinstance(value, dict):
        # keys compared as a set: see the light module (a read-back dict may list its keys in another order)
        return (type(value).__name__, {str(k): _plain(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return (type(value).__name__, value)


def _properties(resources: list[Any]) -> dict[tuple[str, str], Any]:
    """Every output property of every resource, read after the run: (value, known, secret, deps)."""
    from pulumi.runtime.sync_await import _sync_await

    out: dict[tuple[str, str], Any] = {}
    for res in resources:
        for name, value in sorted(vars(res).items()):
            if not isinstance(value, pulumi.Output) or name.startswith("_"):
                continue
            data = _sync_await(value._data)
            deps = sorted(r._name for r in data.resources)
            key = (f"{type(res).__name__}/{res._name}", name)
            out[key] = (_plain(data.value), data.is_known, data.is_secret, deps)
    return out


def _run(stack_file: Path, *, light_path: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    resources: list[Any] = []
    register = pulumi_resource.register_resource  # type: ignore[attr-defined]  # what Resource.__init__ calls

    def recording(res: Any, *args: Any, **kwargs: Any) -> Any:
        resources.append(res)
        return register(res, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(pulumi_resource, "register_resource", recording)
        run = run_program(load_stack(stack_file=stack_file), light=light_path)
    return _fingerprint(run), _properties(resources)


@pytest.mark.parametrize("stack_file", STACK_FILES, ids=lambda p: p.stem)
def test_light_and_full_paths_register_and_resolve_the_same(
    stack_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full, full_props = _run(stack_file, light_path=False, monkeypatch=monkeypatch)
    lean, lean_props = _run(stack_file, light_path=True, monkeypatch=monkeypatch)
    assert lean[0] == full[0]  # registrations
    assert lean[1:] == full[1:]  # stack outputs, invokes, notes
    assert full_props and lean_props.keys() == full_props.keys()
    for key, value in full_props.items():
        assert lean_props[key] == value, key


def test_the_installed_pulumi_has_what_the_light_path_needs() -> None:
    assert light.missing_light_api() == []


def test_without_what_it_needs_the_preview_takes_the_full_path_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    from pulumi.runtime import rpc

    monkeypatch.setattr(light, "PRIVATE_API", (*light.PRIVATE_API, (rpc, "_gone_in_a_later_release")))
    logger = logging.getLogger("nodewright")
    monkeypatch.setattr(logger, "propagate", True)
    with caplog.at_level(logging.WARNING, logger="nodewright"):
        run = run_program(load_stack(stack_file=STACKS / "Pulumi.karpenter.yaml"))
    assert run.registrations
    warnings = [
        r.getMessage()
        for r in caplog.records
        if "pulumi.runtime.rpc._gone_in_a_later_release" in r.getMessage()
    ]
    assert len(set(warnings)) == 1, warnings  # one message (a handler of another test may see it too)


def test_patches_are_restored_after_a_light_run() -> None:
    from pulumi.runtime import rpc

    before = (rpc.transfer_properties, rpc.resolve_outputs)
    run_program(load_stack(stack_file=STACKS / "Pulumi.karpenter.yaml"))
    assert (rpc.transfer_properties, rpc.resolve_outputs) == before


PROGRAM = """
import pulumi
import pulumi_aws as aws

vpc = aws.ec2.Vpc("v", cidr_block="10.0.0.0/16", tags={"b": "2", "a": "1"})
read = aws.ec2.Vpc.get("read", "vpc-123")
# looked up by URN once it is registered
again = vpc.urn.apply(lambda urn: aws.ec2.Vpc("again", opts=pulumi.ResourceOptions(urn=urn)).cidr_block)
lt = aws.ec2.LaunchTemplate("lt", user_data=pulumi.Output.secret("x"), tags={"k": "v"})
aws.ec2.Instance("i", instance_type="t3.micro", launch_template={"id": lt.id, "version": "$Latest"})
pulumi.export("cidr", vpc.cidr_block)
pulumi.export("tags", vpc.tags)
pulumi.export("arn", vpc.arn)
pulumi.export("read", read.id)
pulumi.export("again", again)
pulumi.export("userData", lt.user_data)
pulumi.export("version", lt.latest_version)
"""


def test_a_program_reading_outputs_back_sees_the_same_on_both_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outputs read back (a secret, a computed field, a map), a resource read by id, one looked up
    by URN, an output as another resource's input: both paths agree."""
    (tmp_path / "Pulumi.yaml").write_text("name: t\nruntime: python\n")
    (tmp_path / "Pulumi.t.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (tmp_path / "__main__.py").write_text(PROGRAM)
    stack_file = tmp_path / "Pulumi.t.yaml"
    full, full_props = _run(stack_file, light_path=False, monkeypatch=monkeypatch)
    lean, lean_props = _run(stack_file, light_path=True, monkeypatch=monkeypatch)
    assert lean[0] == full[0]
    assert lean[1:] == full[1:]
    outputs = full[1]
    assert outputs["cidr"] == ("10.0.0.0/16", False, True) and outputs["again"][0] == "10.0.0.0/16"
    assert outputs["userData"][1] and outputs["version"][0] == 1
    assert lean_props == full_props
