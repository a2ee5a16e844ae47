"""An example for every command's ``--help`` (its epilog), on this repository's example files.

One table, attached when the CLI loads a command (:func:`attach`), so a command module stays as it
is; tests/test_cli_contract.py checks that every command has one and that each parses.
"""

from __future__ import annotations

import click

EXAMPLES: dict[str, tuple[str, ...]] = {
    "catalog": ("nodewright catalog list -o json",),
    "catalog list": (
        "nodewright catalog list -o json",
        "nodewright catalog list --nodeclass stacks/nodeclasses.yaml",
    ),
    "cluster": ("nodewright cluster snapshot > cluster-state.json",),
    "cluster snapshot": (
        "nodewright cluster snapshot > cluster-state.json",
        "nodewright cluster snapshot --context prod -o yaml",
    ),
    "plan": ("nodewright plan -f stacks/nodepools.yaml --cluster stacks/examples/cluster.json -o table",),
    "hash": ("nodewright hash -f stacks/nodepools.yaml -o json",),
    "disrupt": (
        "nodewright disrupt -f docs/examples/disrupt/nodepools.yaml --cluster docs/examples/disrupt/cluster.json",
        "nodewright disrupt -f stacks/nodepools.yaml --cluster cluster-state.json --until-quiet -o markdown",
    ),
    "drift": (
        "nodewright drift -f stacks/nodepools.yaml -f stacks/nodeclasses.yaml --cluster stacks/examples/cluster.json",
    ),
    "render": ("nodewright render osc -f stacks/osc/provision-node-init.yaml --format ignition",),
    "render userdata": (
        "nodewright render userdata -f stacks/nodeclasses.yaml --nodepool stacks/nodepools.yaml "
        "--nodepool-name default --cluster-info stacks/cluster-info.yaml --instance-type m5.large",
    ),
    "render osc": ("nodewright render osc -f stacks/osc/provision-node-init.yaml --format ignition",),
    "health": ("nodewright health --cluster stacks/examples/cluster.json -o prometheus",),
    "validate": (
        "nodewright validate -f stacks/nodepools.yaml -f stacks/nodeclasses.yaml",
        "nodewright validate --skip-foreign stacks/nodepools.yaml stacks/Pulumi.dev.yaml",
    ),
    "preview": (
        "nodewright preview --stack dev",
        "nodewright preview --stack dev -o json > base.json",
        "nodewright preview --stack dev --base base.json -o markdown",
    ),
    "init": ("nodewright init my-fleet && cd my-fleet && nodewright preview --stack dev",),
}
"""Command path (``"render userdata"``) -> example command lines."""


def attach(cmd: click.Command, path: str) -> click.Command:
    """Give ``cmd`` (and a group's subcommands) the examples of :data:`EXAMPLES` as epilog."""
    lines = EXAMPLES.get(path)
    if lines and not cmd.epilog:
        cmd.epilog = "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)
    if isinstance(cmd, click.Group):
        for name, sub in cmd.commands.items():
            attach(sub, f"{path} {name}")
    return cmd
