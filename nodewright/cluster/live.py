"""Reading a live cluster through the kubernetes client (``pip install nodewright[live]``).

The client lists the same kinds ``kubectl get -A -o json`` would; raw JSON (not the client's own
model classes) is fed to nodewright's models, so a live read and a file read give the same
:class:`~nodewright.cluster.ClusterState`. Kinds the cluster does not serve (no Karpenter CRDs,
no CSI) are skipped with a warning.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from nodewright.api.documents import Document
from nodewright.api.loading import objects_from_documents
from nodewright.cluster.state import ClusterState, cluster_from_objects
from nodewright.errors import InputError

log = logging.getLogger("nodewright")

# (kind, apiVersion, list path) for every kind the cluster state uses.
KINDS: tuple[tuple[str, str, str], ...] = (
    ("Pod", "v1", "/api/v1/pods"),
    ("Node", "v1", "/api/v1/nodes"),
    ("DaemonSet", "apps/v1", "/apis/apps/v1/daemonsets"),
    ("NodeClaim", "karpenter.sh/v1", "/apis/karpenter.sh/v1/nodeclaims"),
    ("NodePool", "karpenter.sh/v1", "/apis/karpenter.sh/v1/nodepools"),
    ("PersistentVolumeClaim", "v1", "/api/v1/persistentvolumeclaims"),
    ("PersistentVolume", "v1", "/api/v1/persistentvolumes"),
    ("StorageClass", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/storageclasses"),
    ("CSINode", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csinodes"),
)
OPTIONAL = frozenset(
    {"NodeClaim", "NodePool", "CSINode", "StorageClass", "PersistentVolume", "PersistentVolumeClaim"}
)


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
        raise InputError(f"cannot load kubeconfig: {exc}", file=kubeconfig or "~/.kube/config") from exc
    return client.ApiClient()


def _list(api: Any, path: str, limit: int = 500) -> list[dict[str, Any]]:
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
        token = (body.get("metadata") or {}).get("continue")
        if not token:
            return items


def load_live(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    api_factory: Callable[[], Any] | None = None,
    page_size: int = 500,
) -> ClusterState:
    """Read the cluster the kubeconfig (or ``api_factory``) points at."""
    api = api_factory() if api_factory is not None else _client(kubeconfig, context)
    from kubernetes.client.exceptions import ApiException

    docs: list[Document] = []
    source = f"live:{context or 'current-context'}"
    for kind, api_version, path in KINDS:
        try:
            items = _list(api, path, page_size)
        except ApiException as exc:
            if kind in OPTIONAL and exc.status in (403, 404):
                log.warning("%s: cannot list %s (HTTP %s); continuing without them", source, kind, exc.status)
                continue
            raise InputError(
                f"listing {kind} failed: HTTP {exc.status} {exc.reason}", file=source, path=path
            ) from exc
        except OSError as exc:
            raise InputError(f"cannot reach the API server: {exc}", file=source, path=path) from exc
        for i, item in enumerate(items):
            item.setdefault("kind", kind)
            item.setdefault("apiVersion", api_version)
            docs.append(Document(file=source, path=f"{path}[{i}]", body=item))
    return cluster_from_objects(objects_from_documents(docs), source=source)
