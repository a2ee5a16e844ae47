"""Reading a live cluster through the kubernetes client (``pip install nodewright[live]``).

The one code path for ``nodewright cluster snapshot`` and the stack setting
``nodewright:clusterState: live`` (``nodewright preview``, ``pulumi preview``): every kind in
:data:`KINDS` is listed cluster-wide, page by page (``limit``/``continue``, as ``kubectl get
--chunk-size``), and the raw JSON (not the client's own model classes) is fed to nodewright's
models, so a live read and a file read give the same :class:`~nodewright.cluster.ClusterState`.
Secrets are never listed. Kinds the cluster does not serve (no Karpenter CRDs, no CSI) are skipped
with a warning.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from typing import Any, Final

from nodewright.api.documents import Document
from nodewright.api.loading import objects_from_documents
from nodewright.cluster.state import ClusterState, cluster_from_objects
from nodewright.errors import InputError

log = logging.getLogger("nodewright")

# (kind, apiVersion, list path) for every kind nodewright reads from a cluster. No Secret, ever.
KINDS: Final[tuple[tuple[str, str, str], ...]] = (
    ("Pod", "v1", "/api/v1/pods"),
    ("Node", "v1", "/api/v1/nodes"),
    ("DaemonSet", "apps/v1", "/apis/apps/v1/daemonsets"),
    ("NodeClaim", "karpenter.sh/v1", "/apis/karpenter.sh/v1/nodeclaims"),
    ("NodePool", "karpenter.sh/v1", "/apis/karpenter.sh/v1/nodepools"),
    ("EC2NodeClass", "karpenter.k8s.aws/v1", "/apis/karpenter.k8s.aws/v1/ec2nodeclasses"),
    ("PersistentVolumeClaim", "v1", "/api/v1/persistentvolumeclaims"),
    ("PersistentVolume", "v1", "/api/v1/persistentvolumes"),
    ("StorageClass", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/storageclasses"),
    ("CSINode", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csinodes"),
    ("PodDisruptionBudget", "policy/v1", "/apis/policy/v1/poddisruptionbudgets"),
)
OPTIONAL: Final = frozenset(
    {
        "NodeClaim",
        "NodePool",
        "EC2NodeClass",
        "CSINode",
        "StorageClass",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "PodDisruptionBudget",
    }
)
KUBECTL_RESOURCES: Final = (
    "pods,nodes,daemonsets,nodeclaims.karpenter.sh,nodepools.karpenter.sh,"
    "ec2nodeclasses.karpenter.k8s.aws,persistentvolumeclaims,persistentvolumes,storageclasses,csinodes,"
    "poddisruptionbudgets"
)
"""The same kinds for ``kubectl get <this> -A -o json`` (docs/cli.md)."""
PAGE_SIZE: Final = 500

Progress = Callable[[str, int], None]  # (kind, items so far) after each page


def _client(kubeconfig: str | None, context: str | None) -> Any:
    try:
        from kubernetes import client, config
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise InputError(
            "the kubernetes client is not installed; pip install 'nodewright[live]' or use --cluster FILE",
            file="--live",
        ) from exc
    try:
        config.load_kube_config(config_file=kubeconfig, context=context)
    except Exception as exc:
        # In a pod (the Pulumi Kubernetes Operator's workspace) without a kubeconfig: its ServiceAccount.
        if kubeconfig is None and context is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
            try:
                config.load_incluster_config()
                return client.ApiClient()
            except Exception:
                pass
        raise InputError(f"cannot load kubeconfig: {exc}", file=kubeconfig or "~/.kube/config") from exc
    return client.ApiClient()


def _list(
    api: Any, path: str, limit: int = PAGE_SIZE, on_page: Callable[[int], None] | None = None
) -> list[dict[str, Any]]:
    """Every item under ``path``, following ``continue`` tokens (pagination)."""
    items: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        query: list[tuple[str, Any]] = [("limit", limit)]
        if token:
            query.append(("continue", token))
        resp = api.call_api(
            path,
            "GET",
            query_params=query,
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
            _preload_content=False,
            _return_http_data_only=True,
        )
        body = json.loads(resp.data)
        items.extend(body.get("items") or [])
        if on_page is not None:
            on_page(len(items))
        token = (body.get("metadata") or {}).get("continue")
        if not token:
            return items


LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"
_CONTAINER_LISTS: Final = ("containers", "initContainers", "ephemeralContainers")


def _without_env_values(spec: Any) -> Any:
    """A pod spec whose containers keep their env *names* only (values may be credentials)."""
    if not isinstance(spec, dict):
        return spec
    out = dict(spec)
    for key in _CONTAINER_LISTS:
        containers = out.get(key)
        if isinstance(containers, list):
            out[key] = [
                {**c, "env": [{"name": e.get("name")} for e in c["env"] if isinstance(e, dict)]}
                if isinstance(c, dict) and isinstance(c.get("env"), list)
                else c
                for c in containers
            ]
    return out


def _clean(item: dict[str, Any], kind: str, api_version: str) -> dict[str, Any]:
    """An item as ``kubectl get -o json`` shows it (kind/apiVersion set), minus what nodewright never
    reads and a committed snapshot must not carry: ``managedFields``, the last-applied annotation,
    container env values (of Pods and DaemonSet pod templates)."""
    out = {"apiVersion": item.get("apiVersion") or api_version, "kind": item.get("kind") or kind}
    out.update({k: v for k, v in item.items() if k not in ("apiVersion", "kind")})
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k != "managedFields"}
        annotations = meta.get("annotations")
        if isinstance(annotations, dict) and LAST_APPLIED in annotations:
            meta["annotations"] = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
        out["metadata"] = meta
    spec = out.get("spec")
    if kind == "Pod":
        out["spec"] = _without_env_values(spec)
    elif kind == "DaemonSet" and isinstance(spec, dict) and isinstance(spec.get("template"), dict):
        template = spec["template"]
        out["spec"] = {**spec, "template": {**template, "spec": _without_env_values(template.get("spec"))}}
    return out


def _page_reporter(progress: Progress | None, kind: str) -> Callable[[int], None] | None:
    if progress is None:
        return None

    def report(count: int) -> None:
        progress(kind, count)

    return report


def snapshot_items(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    api_factory: Callable[[], Any] | None = None,
    page_size: int = PAGE_SIZE,
    progress: Progress | None = None,
) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """(source, [(list path, item)]) for every kind of :data:`KINDS`, in that order."""
    api = api_factory() if api_factory is not None else _client(kubeconfig, context)
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError as TransportError

    source = f"live:{context or 'current-context'}"
    out: list[tuple[str, dict[str, Any]]] = []
    for kind, api_version, path in KINDS:
        try:
            items = _list(api, path, page_size, _page_reporter(progress, kind))
        except ApiException as exc:
            if kind in OPTIONAL and exc.status in (403, 404):
                log.warning("%s: cannot list %s (HTTP %s); continuing without them", source, kind, exc.status)
                continue
            raise InputError(
                f"listing {kind} failed: HTTP {exc.status} {exc.reason}", file=source, path=path
            ) from exc
        except (OSError, TransportError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise InputError(
                f"cannot reach the API server: {reason}; check the kubeconfig/context (kubectl cluster-info)",
                file=source,
                path=path,
            ) from exc
        out.extend((path, _clean(item, kind, api_version)) for item in items)
    return source, out


def snapshot(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    api_factory: Callable[[], Any] | None = None,
    page_size: int = PAGE_SIZE,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The cluster as one ``kind: List`` (what ``nodewright cluster snapshot`` writes)."""
    _, items = snapshot_items(
        kubeconfig=kubeconfig,
        context=context,
        api_factory=api_factory,
        page_size=page_size,
        progress=progress,
    )
    return {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": [i for _, i in items],
    }


def load_live(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    api_factory: Callable[[], Any] | None = None,
    page_size: int = PAGE_SIZE,
) -> ClusterState:
    """Read the cluster the kubeconfig (or ``api_factory``) points at."""
    source, items = snapshot_items(
        kubeconfig=kubeconfig, context=context, api_factory=api_factory, page_size=page_size
    )
    counters: dict[str, int] = {}
    docs: list[Document] = []
    for path, item in items:
        i = counters.get(path, 0)
        counters[path] = i + 1
        docs.append(Document(file=source, path=f"{path}[{i}]", body=item))
    return cluster_from_objects(objects_from_documents(docs), source=source)
