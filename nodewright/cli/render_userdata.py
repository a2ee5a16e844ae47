"""`nodewright render userdata` (see docs/cli.md): the user data a NodeClass produces.

Thin: load the EC2NodeClass, the NodePool and the cluster facts, find the instance type's pod
count in the catalog when ``spec.kubelet.maxPods`` is unset, call :func:`nodewright.userdata.dispatch`.
``-o raw`` prints the user data byte for byte (it contains the CA bundle: that is the point);
``-o json`` describes it with the CA bundle replaced by ``[secret]``.
"""

from __future__ import annotations

import logging
from typing import Any

import click

from nodewright import labels as L
from nodewright.api import load_objects
from nodewright.cli._common import (
    emit,
    handle_errors,
    karpenter_version_option,
    load_cluster_info,
    output_option,
)
from nodewright.errors import InputError
from nodewright.userdata import UserDataError, effective_kubelet, render
from nodewright.userdata.dispatch import MAX_BYTES, WARN_BYTES
from nodewright.userdata.launch import launch_options
from nodewright.userdata.launch_template import launch_template_spec

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
    "--instance-type", default=None, help="Instance type whose pod capacity sets max-pods (e.g. m5.large)."
)
@click.option(
    "--catalog",
    default="aws:us-east-1",
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
@karpenter_version_option()
@handle_errors
def command(
    nodeclass_file: str,
    nodepool_file: str,
    info_file: str,
    instance_type: str | None,
    catalog: str,
    capacity_type: str | None,
    nodeclass_name: str | None,
    nodepool_name: str | None,
    output: str,
) -> None:
    """Print the user data (decoded) the NodeClass's AMI family produces for the NodePool."""
    nodepool = _pick(
        "NodePool",
        "--nodepool-name",
        items=load_objects([nodepool_file]).nodepools,
        file=nodepool_file,
        name=nodepool_name,
    )
    nodeclasses = load_objects([nodeclass_file]).nodeclasses
    if nodeclass_name is None and len(nodeclasses) > 1:
        nodeclass_name = nodepool.spec.template.spec.node_class_ref.name  # the class the NodePool references
    nodeclass = _pick(
        "EC2NodeClass", "--nodeclass-name", items=nodeclasses, file=nodeclass_file, name=nodeclass_name
    )
    info = load_cluster_info(info_file)

    try:
        family, options = launch_options(
            nodeclass,
            nodepool,
            info,
            instance_type=instance_type,
            catalog=catalog,
            capacity_type=capacity_type,
        )
        rendered = render(family, options)
        facts = effective_kubelet(family=family, kubelet=options.kubelet, user_data=options.custom_user_data)
        template = launch_template_spec(
            nodeclass,
            cluster=info,
            nodepool=nodepool.name,
            user_data=rendered.text,
            capacity_type=str(options.labels.get(L.CAPACITY_TYPE, L.CAPACITY_TYPE_ON_DEMAND)),
            identity={"maxPods": options.kubelet.max_pods if options.kubelet else None},
        )
    except UserDataError as exc:
        on_nodeclass = exc.path.startswith("spec.")
        raise InputError(
            exc.message,
            file=nodeclass.origin_file if on_nodeclass else info_file,
            path=nodeclass.origin_path(exc.path) if on_nodeclass else exc.path,
        ) from None

    if output == "raw":
        click.echo(rendered.text, nl=False)
        return
    k = options.kubelet
    data = {
        "nodeClass": nodeclass.name,
        "nodePool": nodepool.name,
        "amiFamily": rendered.family,
        "instanceType": instance_type,
        "maxPods": k.max_pods if k else None,
        "labels": dict(sorted(options.labels.items())),
        "taints": [t.to_string() for t in options.taints],
        "size": {"bytes": rendered.size, "limit": MAX_BYTES, "warnAt": WARN_BYTES},
        "secrets": ["caBundle"] if options.ca_bundle else [],
        "userData": options.redact(rendered.text),
        "kubelet": {
            "maxPods": facts.max_pods,
            "kubeReserved": dict(facts.kube_reserved),
            "systemReserved": dict(facts.system_reserved),
            "evictionHard": dict(facts.eviction_hard),
            "sources": dict(facts.sources),
        },
        "launchTemplate": {k: v for k, v in template.as_dict().items() if k != "userData"},
    }
    emit(data, output)
