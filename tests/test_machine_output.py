"""Machine output is only the document: every command, every ``-o`` format, as a real process.

In-process runs (``CliRunner``) never see what a C library prints on file descriptor 1 (HiGHS's
banner did, in every format of ``plan --strategy cost``), so each case here is a subprocess on
the repository's example files; its stdout must parse as the format says (``json.loads``,
``yaml.safe_load``, the Prometheus text parser) or, for the human formats, be non-empty and free
of diagnostics (those belong on stderr). ``test_the_matrix_covers_every_command_and_format``
fails when a command or an output format is added without a case here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
import yaml

from nodewright.cli import main

ROOT = Path(__file__).resolve().parents[1]
NP, NC = "stacks/nodepools.yaml", "stacks/nodeclasses.yaml"
CLUSTER, INFO = "stacks/examples/cluster.json", "stacks/cluster-info.yaml"
OSC = ("stacks/osc/provision-node-init.yaml", "stacks/osc/provision-secretref.yaml")

BASE: dict[str, list[str]] = {
    "catalog list": [],
    "plan": ["-f", NP, "-f", NC, "--cluster", CLUSTER],
    "hash": ["-f", NP, "-f", NC, "--cluster-info", INFO],
    "drift": [
        "-f",
        NP,
        "-f",
        NC,
        "--cluster",
        CLUSTER,
        "--cluster-info",
        INFO,
        "--at",
        "2026-03-02T10:00:00Z",
    ],
    "render userdata": ["-f", NC, "--nodepool", NP, "--nodepool-name", "default", "--cluster-info", INFO],
    "render osc": ["-f", OSC[0], "--format", "cloud-init"],
    "health": ["--cluster", CLUSTER, "--at", "2026-03-02T10:00:00Z"],
    "preview": ["--stack", "dev"],
    "validate": ["-f", NP, "-f", NC],
    "cluster snapshot": ["--kubeconfig", "{kubeconfig}", "-q"],
    "init": ["{tmp}/my-fleet"],
    "disrupt": [
        "-f",
        "docs/examples/disrupt/nodepools.yaml",
        "--cluster",
        "docs/examples/disrupt/cluster.json",
    ],
}
"""Each command's arguments on the example files (the ``-o`` format is added per case)."""

VARIANTS: dict[str, list[list[str]]] = {
    "plan": [[], ["--strategy", "cost", "--time-budget", "2"]],
    "render osc": [["-f", f, "--format", fmt] for f in OSC for fmt in ("cloud-init", "bash", "ignition")],
    "render userdata": [[], ["--instance-type", "m5.large", "--instance-type", "c6a.xlarge"]],
}
"""Extra argument sets run in every format of the command (replacing ``-f``/``--format`` for osc)."""

DIAGNOSTIC = ("warning:", "info:", "error:", "note: internal", "Running HiGHS", "Traceback")


def _commands() -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(main)
    for name in main.list_commands(ctx):
        cmd = main.get_command(ctx, name)
        assert cmd is not None
        if isinstance(cmd, click.Group):
            sub = click.Context(cmd, parent=ctx)
            for sname in cmd.list_commands(sub):
                scmd = cmd.get_command(sub, sname)
                assert scmd is not None
                yield f"{name} {sname}", scmd
        else:
            yield name, cmd


def _formats(cmd: click.Command) -> list[str]:
    for p in cmd.params:
        if p.name == "output" and isinstance(p.type, click.Choice):
            return [str(c) for c in p.type.choices]
    return []


FORMATS = {name: _formats(cmd) for name, cmd in _commands()}


def _cases() -> Iterator[tuple[str, str, list[str]]]:
    for name, formats in sorted(FORMATS.items()):
        if name not in BASE:
            continue
        for fmt in formats:
            for extra in VARIANTS.get(name, [[]]):
                args = [*BASE[name], *extra] if name != "render osc" else extra
                yield name, fmt, [*name.split(), *args, "-o", fmt]


CASES = list(_cases())


def test_the_matrix_covers_every_command_and_format() -> None:
    missing = sorted(name for name, formats in FORMATS.items() if formats and name not in BASE)
    assert missing == [], f"add the commands to BASE: {missing}"
    covered = {(name, fmt) for name, fmt, _ in CASES}
    assert covered == {(n, f) for n, fs in FORMATS.items() if n in BASE for f in fs}


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    sys.path.insert(0, str(ROOT / "tests/cluster"))
    from apiserver_harness import kubeconfig_for, serve

    with serve() as url:
        yield str(kubeconfig_for(url, tmp_path_factory.mktemp("kube")))


def _check(fmt: str, out: str) -> None:
    assert out.strip(), "empty stdout"
    if fmt == "json":
        json.loads(out)
    elif fmt == "yaml":
        list(yaml.safe_load_all(out))
    elif fmt == "prometheus":
        from prometheus_client.parser import text_string_to_metric_families

        assert list(text_string_to_metric_families(out))
    elif fmt == "raw":
        assert not out.startswith(DIAGNOSTIC), out[:200]
    else:  # table, markdown: human text, but no diagnostic line among it
        stray = [line for line in out.splitlines() if line.lstrip("> ").startswith(DIAGNOSTIC)]
        assert stray == [], stray


@pytest.mark.parametrize(("name", "fmt", "args"), CASES, ids=[" ".join(c[2]) for c in CASES])
def test_stdout_is_only_the_document(
    name: str, fmt: str, args: list[str], request: pytest.FixtureRequest
) -> None:
    if name == "cluster snapshot":
        pytest.importorskip("kubernetes")
        args = [a.replace("{kubeconfig}", request.getfixturevalue("kubeconfig")) for a in args]
    if name == "init":
        args = [a.replace("{tmp}", str(request.getfixturevalue("tmp_path"))) for a in args]
    proc = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    _check(fmt, proc.stdout)
