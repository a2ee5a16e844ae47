"""What `nodewright render userdata` prints: the user data of one NodePool + EC2NodeClass per instance type.

:func:`render_report` resolves the launch options of each requested instance type (``all``: every
type of the NodeClass's catalog), renders the user data once per distinct options (instance types
differ mostly by max-pods only) and returns a :class:`UserDataReport` of frozen
:class:`RenderedUserData`: ``text`` is the user data byte for byte (CA bundle in clear: the point of
``-o raw --show-secrets``); :meth:`RenderedUserData.as_dict` is the ``-o json`` description, the CA
bundle redacted. A :class:`~nodewright.userdata.UserDataError` becomes an
:class:`~nodewright.errors.InputError` on the NodeClass (``spec.*`` paths) or on the cluster facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nodewright import labels as L
from nodewright.api import EC2NodeClass, NodePool
from nodewright.catalog.loader import DEFAULT_SPEC
from nodewright.errors import InputError
from nodewright.settings import KarpenterSettings
from nodewright.userdata.dispatch import MAX_BYTES, WARN_BYTES, Rendered, render
from nodewright.userdata.facts import KubeletFacts, effective_kubelet
from nodewright.userdata.launch import launch_options
from nodewright.userdata.launch_template import LaunchTemplateSpec, launch_template_spec
from nodewright.userdata.nodeclass import nodeclass_catalog
from nodewright.userdata.options import ClusterInfo, Options, UserDataError


@dataclass(frozen=True, kw_only=True)
class RenderedUserData:
    """The user data of one launch (one instance type, or none) and what describes it.

    ``text`` is the user data as the node receives it (CA bundle in clear); ``redacted`` the same
    with the CA bundle as ``[secret]``; ``secrets`` the names of the secrets ``text`` holds.
    """

    node_class: str
    node_pool: str
    ami_family: str
    instance_type: str | None
    max_pods: int | None
    labels: Mapping[str, str]
    taints: tuple[str, ...]
    text: str
    redacted: str
    secrets: tuple[str, ...]
    kubelet: KubeletFacts
    launch_template: LaunchTemplateSpec

    @property
    def size(self) -> int:
        """Bytes of the user data (EC2's limit is :data:`~nodewright.userdata.MAX_BYTES`)."""
        return len(self.text.encode())

    def as_dict(self) -> dict[str, Any]:
        """The ``-o json`` description (camelCase; the CA bundle redacted)."""
        facts = self.kubelet
        return {
            "nodeClass": self.node_class,
            "nodePool": self.node_pool,
            "amiFamily": self.ami_family,
            "instanceType": self.instance_type,
            "maxPods": self.max_pods,
            "labels": dict(sorted(self.labels.items())),
            "taints": list(self.taints),
            "size": {"bytes": self.size, "limit": MAX_BYTES, "warnAt": WARN_BYTES},
            "secrets": list(self.secrets),
            "userData": self.redacted,
            "kubelet": {
                "maxPods": facts.max_pods,
                "kubeReserved": dict(facts.kube_reserved),
                "systemReserved": dict(facts.system_reserved),
                "evictionHard": dict(facts.eviction_hard),
                "sources": dict(facts.sources),
            },
            "launchTemplate": {k: v for k, v in self.launch_template.as_dict().items() if k != "userData"},
        }


@dataclass(frozen=True)
class UserDataReport:
    """The renders in the requested order; one (possibly without instance type) or several."""

    renders: tuple[RenderedUserData, ...]

    @property
    def several(self) -> bool:
        """True when several instance types were rendered (the output is keyed by instance type)."""
        return len(self.renders) > 1

    def as_dict(self) -> dict[str, Any]:
        """One render's description, or ``{instanceType: description}`` for several."""
        if not self.several:
            return self.renders[0].as_dict()
        return {str(r.instance_type): r.as_dict() for r in self.renders}


def render_report(
    nodeclass: EC2NodeClass,
    nodepool: NodePool,
    info: ClusterInfo,
    *,
    instance_types: Sequence[str] = (),
    catalog: str = DEFAULT_SPEC,
    capacity_type: str | None = None,
    settings: KarpenterSettings | None = None,
    info_file: str = "<input>",
) -> UserDataReport:
    """The user data of ``nodeclass`` + ``nodepool`` for each of ``instance_types`` (``all``: the catalog's).

    ``info_file`` names the cluster facts in errors about them.
    """
    names = _instance_types(instance_types, catalog=catalog, nodeclass=nodeclass, settings=settings)
    cache: dict[tuple[str, str, str | None], Rendered] = {}
    launches: list[str | None] = [*names] or [None]
    renders = [
        _one(nodeclass, nodepool, info, name, catalog, capacity_type, settings, info_file, cache)
        for name in launches
    ]
    return UserDataReport(tuple(renders))


def _instance_types(
    requested: Sequence[str], *, catalog: str, nodeclass: EC2NodeClass, settings: KarpenterSettings | None
) -> list[str]:
    """The requested instance types in order, ``all`` expanded to the catalog's, duplicates dropped."""
    if "all" not in requested:
        return list(dict.fromkeys(requested))
    names = nodeclass_catalog(catalog, nodeclass, settings).names()
    return list(dict.fromkeys([*(r for r in requested if r != "all"), *sorted(names)]))


def _one(
    nodeclass: EC2NodeClass,
    nodepool: NodePool,
    info: ClusterInfo,
    instance_type: str | None,
    catalog: str,
    capacity_type: str | None,
    settings: KarpenterSettings | None,
    info_file: str,
    cache: dict[tuple[str, str, str | None], Rendered],
) -> RenderedUserData:
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
        rendered = _render_cached(family, options, cache)
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
    return RenderedUserData(
        node_class=nodeclass.name,
        node_pool=nodepool.name,
        ami_family=rendered.family,
        instance_type=instance_type,
        max_pods=k.max_pods if k else None,
        labels=dict(options.labels),
        taints=tuple(t.to_string() for t in options.taints),
        text=rendered.text,
        redacted=options.redact(rendered.text),
        secrets=("caBundle",) if options.ca_bundle else (),
        kubelet=facts,
        launch_template=template,
    )


def _render_cached(
    family: str, options: Options, cache: dict[tuple[str, str, str | None], Rendered]
) -> Rendered:
    """:func:`render`, once per distinct options of one report."""
    key = (family, repr(options), options.ca_bundle)
    if key not in cache:
        cache[key] = render(family, options)
    return cache[key]
