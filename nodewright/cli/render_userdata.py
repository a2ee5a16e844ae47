"""`nodewright render userdata` (see docs/cli.md): the user data a NodeClass produces.

Thin: load the EC2NodeClass, the NodePool and the cluster facts, call
:func:`nodewright.userdata.render_report` (one render per instance type), format it.
``-o raw`` prints the user data byte for byte (it contains the CA bundle: that is the point);
``-o json`` describes it with the CA bundle replaced by ``[secret]``.
"""

from __future__ import annotations

import logging
from typing import Any

import click

from nodewright.api import load_objects
from nodewright.catalog.loader import DEFAULT_SPEC
from nodewright.cli._common import (
    echo_secret,
    emit,
    handle_errors,
    karpenter_options,
    load_cluster_info,
    output_option,
)
from nodewright.crd import Release
from nodewright.errors import InputError
from nodewright.settings import KarpenterSettings
from nodewright.userdata import render_report

log = logging.getLogger("nodewright")


def _pick(kind: str, option: str, *, items: list[Any], file: str, name: str | None) -> Any:
    """The one object named ``name`` (or the only one) of ``kind`` in ``file``."""
    if name is not None:
        found = [i for i in items if i.name == name]
        if not found:
            names = ", ".join(i.name for i in items) or "none"
            raise InputError(f"no {kind} named {name!r} (found: {names})", file=file)
        return found[0]
    if not items:
        raise InputError(f"no {kind} found", file=file)
    if len(items) > 1:
        names = ", ".join(i.name for i in items)
        raise InputError(
            f"the file holds several {kind} objects ({names}); choose one with {option} NAME", file=file
        )
    return items[0]


@click.command("userdata")
@click.option("-f", "--filename", "nodeclass_file", required=True, help="EC2NodeClass YAML/JSON.")
@click.option("--nodepool", "nodepool_file", required=True, help="NodePool YAML/JSON.")
@click.option(
    "--cluster-info",
    "info_file",
    required=True,
    help="clusterName, clusterEndpoint, caBundle, clusterCIDR, clusterDNS.",
)
@click.option(
    "--instance-type",
    "instance_types",
    multiple=True,
    help="Instance type whose pod capacity sets max-pods (e.g. m5.large); repeat it, or `all` for every "
    "type of the catalog, to render several in one run.",
)
@click.option(
    "--show-secrets",
    is_flag=True,
    default=False,
    help="-o raw: print the user data byte for byte, CA bundle included (default: secrets print as [secret]).",
)
@click.option(
    "--catalog",
    default=DEFAULT_SPEC,
    show_default=True,
    help="Instance-type catalog: file or aws:<region>.",
)
@click.option(
    "--capacity-type", default=None, help="Capacity type label of the launch (default: from the NodePool)."
)
@click.option(
    "--nodeclass-name", default=None, help="Which EC2NodeClass (default: the one the NodePool references)."
)
@click.option("--nodepool-name", default=None, help="Which NodePool, when the file holds several.")
@output_option(("raw", "json"), default="raw")
@karpenter_options()
@handle_errors
def command(
    nodeclass_file: str,
    nodepool_file: str,
    info_file: str,
    instance_types: tuple[str, ...],
    show_secrets: bool,
    catalog: str,
    capacity_type: str | None,
    nodeclass_name: str | None,
    nodepool_name: str | None,
    output: str,
    release: Release,
    settings: KarpenterSettings,
) -> None:
    """Print the user data (decoded) the NodeClass's AMI family produces for the NodePool."""
    nodepool = _pick(
        "NodePool",
        "--nodepool-name",
        items=load_objects([nodepool_file], release=release).nodepools,
        file=nodepool_file,
        name=nodepool_name,
    )
    nodeclasses = load_objects([nodeclass_file], release=release).nodeclasses
    if nodeclass_name is None and len(nodeclasses) > 1:
        nodeclass_name = nodepool.spec.template.spec.node_class_ref.name  # the class the NodePool references
    nodeclass = _pick(
        "EC2NodeClass", "--nodeclass-name", items=nodeclasses, file=nodeclass_file, name=nodeclass_name
    )
    info = load_cluster_info(info_file)
    report = render_report(
        nodeclass,
        nodepool,
        info,
        instance_types=instance_types,
        catalog=catalog,
        capacity_type=capacity_type,
        settings=settings,
        info_file=info_file,
    )
    if output != "raw":
        emit(report.as_dict(), output)
        return
    echo = echo_secret if show_secrets else click.echo
    if not report.several:
        echo(report.renders[0].text, nl=False)
        return
    for one in report.renders:
        click.echo(f"==> {one.instance_type} <==")
        echo(one.text, nl=not one.text.endswith("\n"))
