"""Reading a live cluster through the kubernetes client (``pip install nodewright[live]``).

The one code path for ``nodewright cluster snapshot`` and the stack setting
``nodewright:clusterState: live`` (``nodewright preview``, ``pulumi preview``): every kind of
:data:`nodewright.cluster.kinds.TABLE` is listed cluster-wide, page by page (``limit``/``continue``,
as ``kubectl get --chunk-size``; an expired token, ``410 Gone``, falls back to one full list as
client-go's pager does), and the raw JSON (not the client's model classes) is checked (list shape,
each item's kind and apiVersion) and fed to nodewright's models, so a live read and a file read
give the same :class:`~nodewright.cluster.ClusterState`. Timeouts, the deadline and retries are
:mod:`nodewright.cluster.transport`'s. A kind the identity may not list (403), or that fails, is an
error naming the RBAC rule to add: never a partial snapshot. Only a CRD kind the cluster does not
serve (404) is skipped, with a warning, and recorded in the snapshot. Secrets are never listed,
and one served inside another list is refused.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from nodewright.api.documents import Document
from nodewright.api.loading import MIGRATION_HINT, objects_from_documents
from nodewright.cluster import controller
from nodewright.cluster.kinds import POD_TEMPLATE_AT, TABLE, Kind
from nodewright.cluster.state import ClusterState, cluster_from_objects
from nodewright.cluster.transport import Deadline, HTTPStatusError, Limits, Target, get_json, retry_policy
from nodewright.errors import InputError, clip

log = logging.getLogger("nodewright")

KINDS: Final[tuple[tuple[str, str, str], ...]] = tuple((k.kind, k.api_version, k.path) for k in TABLE)
"""(kind, apiVersion, list path) of every kind read, in order. No Secret, ever."""
KUBECTL_RESOURCES: Final = ",".join(f"{k.resource}.{k.group}" if k.crd else k.resource for k in TABLE)
"""The same kinds for ``kubectl get <this> -A -o json`` (docs/cli.md)."""
PAGE_SIZE: Final = 500
MAX_PAGES: Final = 100_000

Progress = Callable[[str, int], None]  # (kind, items so far) after each page


def _client(kubeconfig: str | None, context: str | None, limits: Limits, deadline: Deadline) -> Any:
    try:
        from kubernetes import client, config
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise InputError(
            "the kubernetes client is not installed; pip install 'nodewright[live]' or use --cluster FILE",
            file="--live",
        ) from exc
    configuration = client.Configuration()
    try:
        config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)
    except Exception as exc:
        # In a pod (the Pulumi Kubernetes Operator's workspace) without a kubeconfig: its ServiceAccount.
        if not (kubeconfig is None and context is None and os.environ.get("KUBERNETES_SERVICE_HOST")):
            raise InputError(f"cannot load kubeconfig: {exc}", file=kubeconfig or "~/.kube/config") from exc
        try:
            config.load_incluster_config(client_configuration=configuration)
        except Exception:
            raise InputError(f"cannot load kubeconfig: {exc}", file=kubeconfig or "~/.kube/config") from exc
    configuration.retries = retry_policy(limits, deadline)
    return client.ApiClient(configuration)


def _page_items(body: Any, kind: Kind, target: Target) -> tuple[list[dict[str, Any]], str | None]:
    """The items and ``continue`` token of one list page, each item checked for kind and apiVersion."""
    if not isinstance(body, dict):
        raise target.error(f"the API server's response is a JSON {_json_type(body)}, not a {kind.kind}List")
    list_kind, list_version = body.get("kind"), body.get("apiVersion")
    if list_version is not None and list_version != kind.api_version:
        raise target.error(_wrong_version(kind, list_version), path="apiVersion")
    if list_kind is not None and list_kind not in (f"{kind.kind}List", "List"):
        raise target.error(
            f"the API server returned a {clip(str(list_kind), 60)}, not a {kind.kind}List", path="kind"
        )
    items = body.get("items")
    if items is None:
        items = []
    if not isinstance(items, list):
        raise target.error(f"items is a JSON {_json_type(items)}, not an array", path="items")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise target.error(f"a JSON {_json_type(item)}, not an object", path=f"items[{i}]")
        item_kind, item_version = item.get("kind"), item.get("apiVersion")
        if item_kind is not None and item_kind != kind.kind:
            what = clip(str(item_kind), 60)
            why = " (nodewright never reads or writes Secrets)" if item_kind == "Secret" else ""
            raise target.error(f"a {what} inside the {kind.kind} list: refused{why}", path=f"items[{i}].kind")
        if item_version is not None and item_version != kind.api_version:
            raise target.error(_wrong_version(kind, item_version), path=f"items[{i}].apiVersion")
        if "data" in item or "stringData" in item:  # no kind read has them: a Secret without its kind
            raise target.error(
                f"an object with data (a Secret?) inside the {kind.kind} list: refused (nodewright never reads "
                "or writes Secrets)",
                path=f"items[{i}]",
            )
    meta = body.get("metadata")
    token = meta.get("continue") if isinstance(meta, dict) else None
    if token is not None and not isinstance(token, str):
        raise target.error("metadata.continue is not a string", path="metadata.continue")
    return items, token or None


def _wrong_version(kind: Kind, served: Any) -> str:
    hint = MIGRATION_HINT.get(str(served), f"nodewright reads {kind.api_version}")
    return f"the API server serves {clip(str(served), 60)} {kind.kind}s; {hint}"


_JSON_TYPE: Final = {"dict": "object", "list": "array", "str": "string", "int": "number", "float": "number",
                     "bool": "boolean", "NoneType": "null"}  # fmt: skip


def _json_type(value: Any) -> str:
    return _JSON_TYPE.get(type(value).__name__, type(value).__name__)


def _list(
    api: Any,
    kind: Kind,
    *,
    target: Target,
    limits: Limits,
    deadline: Deadline,
    page_size: int,
    on_page: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Every item of ``kind``, following ``continue`` tokens; on ``410 Gone`` for an expired token,
    one full list without ``limit`` (client-go tools/pager, ``FullListIfExpired``)."""
    items: list[dict[str, Any]] = []
    token: str | None = None
    relisted = False
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        query: list[tuple[str, Any]] = [] if relisted else [("limit", page_size)]
        if token:
            query.append(("continue", token))
        try:
            body = get_json(api, kind.path, query, target=target, limits=limits, deadline=deadline)
        except HTTPStatusError as exc:
            if exc.status == 410 and token and not relisted:
                log.warning(
                    "%s %s: the continue token expired (HTTP 410 Gone); listing them again in one request",
                    target.server,
                    kind.kind,
                )
                items, token, relisted = [], None, True
                continue
            raise
        page, token = _page_items(body, kind, target)
        items.extend(page)
        if on_page is not None:
            on_page(len(items))
        if not token:
            return items
        if token in seen:
            raise target.error(
                "the API server repeated a continue token (a paging loop)", path="metadata.continue"
            )
        seen.add(token)
    raise target.error(f"more than {MAX_PAGES} pages; raise --page-size")


def _status_error(exc: HTTPStatusError, kind: Kind, target: Target) -> InputError:
    said = f" ({exc.message})" if exc.message else ""
    if exc.status == 403:
        return target.error(
            f"list is forbidden (HTTP 403){said}; add the RBAC rule {target.rbac_rule()} to the "
            "identity's ClusterRole (docs/cli.md lists them all)"
        )
    if exc.status == 401:
        return target.error(
            "the API server refused the credentials (HTTP 401); refresh the kubeconfig "
            "(e.g. aws eks update-kubeconfig)"
        )
    if exc.status == 404:
        return target.error(
            f"the API server does not serve {kind.path} (HTTP 404){said}; is this a Kubernetes API server?"
        )
    return target.error(f"listing failed: HTTP {exc.status} {clip(exc.reason, 60)}{said}")


def _served_versions(
    api: Any, kind: Kind, *, target: Target, limits: Limits, deadline: Deadline
) -> list[str]:
    """The versions the cluster serves of ``kind``'s API group (discovery, ``GET /apis/<group>``)."""
    try:
        body = get_json(api, f"/apis/{kind.group}", [], target=target, limits=limits, deadline=deadline)
    except HTTPStatusError:
        return []
    versions = body.get("versions") if isinstance(body, dict) else None
    if not isinstance(versions, list):
        return []
    return [str(v.get("groupVersion")) for v in versions if isinstance(v, dict) and v.get("groupVersion")]


def _without_env_values(spec: Any) -> Any:
    """A pod spec whose containers keep their env *names* only (values may be credentials)."""
    if not isinstance(spec, dict):
        return spec
    out = dict(spec)
    for key in ("containers", "initContainers", "ephemeralContainers"):
        containers = out.get(key)
        if isinstance(containers, list):
            out[key] = [
                {**c, "env": [{"name": e.get("name")} for e in c["env"] if isinstance(e, dict)]}
                if isinstance(c, dict) and isinstance(c.get("env"), list)
                else c
                for c in containers
            ]
    return out


def _replace_at(obj: dict[str, Any], at: tuple[str, ...], fn: Callable[[Any], Any]) -> dict[str, Any]:
    """``obj`` with the value at the key path ``at`` (non-empty) replaced by ``fn(value)``, if present."""
    head, rest = at[0], at[1:]
    if head not in obj:
        return obj
    if not rest:
        return {**obj, head: fn(obj[head])}
    child = obj[head]
    return {**obj, head: _replace_at(child, rest, fn)} if isinstance(child, dict) else obj


LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"


def _clean(item: dict[str, Any], kind: str, api_version: str) -> dict[str, Any]:
    """An item as ``kubectl get -o json`` shows it (kind/apiVersion set), minus what nodewright never
    reads and a committed snapshot must not carry: ``managedFields``, the last-applied annotation,
    container env values (of Pods and every pod template)."""
    out = {"apiVersion": item.get("apiVersion") or api_version, "kind": item.get("kind") or kind}
    out.update({k: v for k, v in item.items() if k not in ("apiVersion", "kind")})
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k != "managedFields"}
        annotations = meta.get("annotations")
        if isinstance(annotations, dict) and LAST_APPLIED in annotations:
            meta["annotations"] = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
        out["metadata"] = meta
    at = POD_TEMPLATE_AT.get(kind)
    return out if at is None else _replace_at(out, at, _without_env_values)


@dataclass
class LiveRead:
    """What one live read found: the items (with their list path), skipped kinds, the controller."""

    source: str
    server: str
    items: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    controller: str | None = None
    settings: dict[str, str] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return controller.snapshot_record(
            skipped=self.skipped, controller=self.controller, settings=self.settings
        )


def _page_reporter(progress: Progress | None, kind: str) -> Callable[[int], None] | None:
    if progress is None:
        return None

    def report(count: int) -> None:
        progress(kind, count)

    return report


def read_live(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    api_factory: Callable[[], Any] | None = None,
    page_size: int = PAGE_SIZE,
    progress: Progress | None = None,
    limits: Limits | None = None,
    karpenter_namespace: str | None = None,
    karpenter_deployment: str | None = None,
) -> LiveRead:
    """Every kind of :data:`KINDS`, in that order, and the Karpenter controller's settings."""
    limits = limits or Limits()
    deadline = Deadline(limits.timeout)
    api = api_factory() if api_factory is not None else _client(kubeconfig, context, limits, deadline)
    server = str(getattr(getattr(api, "configuration", None), "host", "") or "<api-server>")
    read = LiveRead(source=f"live:{context or 'current-context'}", server=server)
    deployments: list[dict[str, Any]] = []
    for kind in TABLE:
        target = Target(server=server, kind=kind.kind, group=kind.group, resource=kind.resource)
        try:
            items = _list(
                api,
                kind,
                target=target,
                limits=limits,
                deadline=deadline,
                page_size=page_size,
                on_page=_page_reporter(progress, kind.kind),
            )
        except HTTPStatusError as exc:
            if exc.status != 404 or not kind.crd:
                raise _status_error(exc, kind, target) from exc
            served = _served_versions(api, kind, target=target, limits=limits, deadline=deadline)
            if served and kind.api_version not in served:
                raise target.error(_wrong_version(kind, " or ".join(served))) from exc
            log.warning(
                "%s %s: not served by the cluster (HTTP 404, no %s CRD); skipped, and recorded in the snapshot",
                server,
                kind.kind,
                kind.api_version,
            )
            read.skipped.append({"kind": kind.kind, "apiVersion": kind.api_version, "reason": "NotFound"})
            continue
        if kind.kind == "Deployment":
            deployments = items
        read.items.extend((kind.path, _clean(item, kind.kind, kind.api_version)) for item in items)
    _controller(read, deployments, karpenter_namespace, karpenter_deployment)
    return read


def _controller(
    read: LiveRead, deployments: list[dict[str, Any]], namespace: str | None, name: str | None
) -> None:
    found = controller.find_controller(deployments, namespace=namespace, name=name)
    if found is None:
        if namespace is not None or name is not None:
            where = f"{namespace or controller.DEFAULT_NAMESPACE}/{name or controller.DEFAULT_NAME}"
            raise InputError(
                f"no Deployment {where}; name the Karpenter controller with --karpenter-namespace/--karpenter-deployment",
                file=f"{read.server} Deployment",
            )
        log.warning(
            "%s: no Karpenter controller Deployment (kube-system/karpenter, karpenter/karpenter); its settings "
            "are not recorded (name it with --karpenter-namespace/--karpenter-deployment)",
            read.server,
        )
        return
    meta = found.get("metadata") or {}
    read.controller = f"{meta.get('namespace')}/{meta.get('name')}"
    read.settings, notes = controller.controller_settings(found)
    for note in notes:
        log.warning("%s: %s", read.server, note)


def snapshot(**kwargs: Any) -> dict[str, Any]:
    """The cluster as one ``kind: List`` (what ``nodewright cluster snapshot`` writes): the items of
    every kind, then the ``ClusterSnapshot`` record (skipped kinds, Karpenter controller settings).
    Takes :func:`read_live`'s arguments."""
    read = read_live(**kwargs)
    return {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": [i for _, i in read.items] + [read.record()],
    }


def load_live(**kwargs: Any) -> ClusterState:
    """Read the cluster the kubeconfig (or ``api_factory``) points at; takes :func:`read_live`'s arguments."""
    read = read_live(**kwargs)
    counters: dict[str, int] = {}
    docs: list[Document] = []
    for path, item in read.items:
        i = counters.get(path, 0)
        counters[path] = i + 1
        docs.append(Document(file=read.source, path=f"{path}[{i}]", body=item))
    docs.append(Document(file=read.source, path="snapshot", body=read.record()))
    return cluster_from_objects(objects_from_documents(docs), source=read.source)
