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

    names = _instance_types(instance_types, catalog=catalog, nodeclass=nodeclass, settings=settings)
    if len(names) <= 1:
        instance_type = names[0] if names else None
        text, data = _one(
            nodeclass, nodepool, info, info_file, instance_type, catalog, capacity_type, settings
        )
        if output == "raw":
            (echo_secret if show_secrets else click.echo)(text, nl=False)
        else:
            emit(data, output)
        return
    rendered: dict[str, tuple[str, dict[str, Any]]] = {
        name: _one(nodeclass, nodepool, info, info_file, name, catalog, capacity_type, settings)
        for name in names
    }
    if output == "raw":
        for name, (text, _) in rendered.items():
            click.echo(f"==> {name} <==")
            (echo_secret if show_secrets else click.echo)(text, nl=not text.endswith("\n"))
        return
    emit({name: data for name, (_, data) in rendered.items()}, output)


def _instance_types(
    requested: tuple[str, ...], *, catalog: str, nodeclass: Any, settings: KarpenterSettings
) -> list[str]:
    """The requested instance types in order, ``all`` expanded to the catalog's, duplicates dropped."""
    if "all" not in requested:
        return list(dict.fromkeys(requested))
    from nodewright.userdata import nodeclass_catalog

    names = nodeclass_catalog(catalog, nodeclass, settings).names()
    return list(dict.fromkeys([*(r for r in requested if r != "all"), *sorted(names)]))


def _one(
    nodeclass: Any,
    nodepool: Any,
    info: Any,
    info_file: str,
    instance_type: str | None,
    catalog: str,
    capacity_type: str | None,
    settings: KarpenterSettings,
) -> tuple[str, dict[str, Any]]:
    """The user data for one instance type (raw text) and its ``-o json`` description."""
    try:
        family, options = launch_options(
            nodeclass,
            nodepool,
            info,
            instance_type=instance_type,
            catalog=catalog,
            capacity_type=capacity_type,
            settings=settings,
        )
        rendered = _render_cached(family, options)
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
    return rendered.text, data


_RENDERED: dict[tuple[str, str, Any], Any] = {}


def _render_cached(family: str, options: Any) -> Any:
    """:func:`render`, once per distinct options (instance types differ mostly by max-pods only)."""
    key = (family, repr(options), options.ca_bundle)
    if key not in _RENDERED:
        _RENDERED[key] = render(family, options)
    return _RENDERED[key]
