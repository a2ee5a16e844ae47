"""`nodewright catalog` (see docs/cli.md): inspect the instance-type catalog.

``nodewright catalog list [--catalog aws:us-east-1|FILE] [--nodeclass FILE] [-o table|json|yaml]``
prints every instance type with its capacity, allocatable, overhead, max pods, offerings, price
(the cheapest available on-demand offering) and requirements. Thin: parse, load, print.
"""

from __future__ import annotations

from typing import Any

import click

from nodewright.algebra.resources import format_resource_list
from nodewright.api.loading import load_objects
from nodewright.catalog.loader import DEFAULT_SPEC
from nodewright.catalog.model import InstanceType
from nodewright.cli._common import emit, handle_errors, karpenter_options, output_option
from nodewright.crd import Release
from nodewright.errors import InputError
from nodewright.settings import KarpenterSettings
from nodewright.tables import format_markdown_table, format_table
from nodewright.userdata import nodeclass_catalog

_HEADERS = ("NAME", "CPU", "MEMORY", "MAX PODS", "PRICE", "ALLOCATABLE CPU", "ALLOCATABLE MEMORY")


def _row(it: InstanceType) -> list[Any]:
    cap = format_resource_list(it.capacity)
    alloc = format_resource_list(it.allocatable())
    od = it.cheapest("on-demand") or it.cheapest()
    return [
        it.name,
        cap.get("cpu", "0"),
        cap.get("memory", "0"),
        it.max_pods,
        f"{od.price:.4f}" if od is not None else "-",
        alloc.get("cpu", "0"),
        alloc.get("memory", "0"),
    ]


def _nodeclass(path: str | None, release: Release) -> Any:
    if path is None:
        return None
    classes = load_objects(
        [path], release=release
    ).nodeclasses  # validated: a bad kubelet map is a located error
    if len(classes) != 1:
        raise InputError(f"expected exactly one EC2NodeClass, found {len(classes)}", file=path)
    return classes[0]


@click.group("catalog")
def command() -> None:
    """Inspect the instance-type catalog (aws:<region> or an InstanceTypeCatalog file)."""


@command.command("list")
@click.option(
    "--catalog",
    "catalog_spec",
    default=DEFAULT_SPEC,
    show_default=True,
    help="aws:<region> (EC2, or the embedded moto-backed default without credentials) or a catalog file.",
)
@click.option(
    "--nodeclass",
    "nodeclass_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="An EC2NodeClass file whose kubelet, AMI family and block devices shape capacity.",
)
@output_option(("table", "json", "yaml", "markdown"))
@karpenter_options()
@handle_errors
def list_command(
    catalog_spec: str, nodeclass_path: str | None, output: str, release: Release, settings: KarpenterSettings
) -> None:
    """List instance types: capacity, allocatable, max pods and price."""
    catalog = nodeclass_catalog(catalog_spec, _nodeclass(nodeclass_path, release), settings)
    rows = [_row(it) for it in catalog]
    emit(
        [it.to_dict() for it in catalog] if output in ("json", "yaml") else None,
        output,
        table=lambda: format_table(_HEADERS, rows),
        markdown=lambda: format_markdown_table(_HEADERS, rows),
    )
