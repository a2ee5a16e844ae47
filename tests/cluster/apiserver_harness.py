"""A loopback HTTP server speaking the Kubernetes API with recorded responses (test harness).

Serves the example cluster state (stacks/examples/cluster.json, plus an EC2NodeClass, a StorageClass,
workloads, a PodDisruptionBudget, a NodeOverlay and the Karpenter controller's Deployment) as the API
server does: one typed list per kind (``PodList``, ``NodeList``...: items without kind/apiVersion),
server-side pagination with ``limit``/``continue`` (no ``limit``: every item), discovery of the
Karpenter group, 404 for what it does not serve (CapacityBuffers: no CRD), a bearer token checked on
every request. :data:`Recorded.faults` injects what real API servers and proxies do: silence, a
reset connection, 403/410/429/5xx, an HTML page, truncated JSON, a wrongly shaped body. Used by the
live loader, ``cluster snapshot`` and README walkthrough tests; never a mocked client.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlparse

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "stacks/examples/cluster.json"
KIND_PATH = {
    "Pod": "/api/v1/pods",
    "Node": "/api/v1/nodes",
    "DaemonSet": "/apis/apps/v1/daemonsets",
    "Deployment": "/apis/apps/v1/deployments",
    "ReplicaSet": "/apis/apps/v1/replicasets",
    "StatefulSet": "/apis/apps/v1/statefulsets",
    "Job": "/apis/batch/v1/jobs",
    "PodTemplate": "/api/v1/podtemplates",
    "PodDisruptionBudget": "/apis/policy/v1/poddisruptionbudgets",
    "NodeClaim": "/apis/karpenter.sh/v1/nodeclaims",
    "NodePool": "/apis/karpenter.sh/v1/nodepools",
    "EC2NodeClass": "/apis/karpenter.k8s.aws/v1/ec2nodeclasses",
    "NodeOverlay": "/apis/karpenter.sh/v1alpha1/nodeoverlays",
    "PersistentVolumeClaim": "/api/v1/persistentvolumeclaims",
    "PersistentVolume": "/api/v1/persistentvolumes",
    "StorageClass": "/apis/storage.k8s.io/v1/storageclasses",
    "CSINode": "/apis/storage.k8s.io/v1/csinodes",
}
# /api/v1/pods -> v1; /apis/apps/v1/daemonsets -> apps/v1
LIST_API_VERSION = {k: p.split("/")[2] if p.startswith("/api/") else "/".join(p.split("/")[2:4])
                    for k, p in KIND_PATH.items()}  # fmt: skip
DISCOVERY = {
    "/apis/karpenter.sh": {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": "karpenter.sh",
        "versions": [{"groupVersion": "karpenter.sh/v1", "version": "v1"},
                     {"groupVersion": "karpenter.sh/v1alpha1", "version": "v1alpha1"}],
    },
}  # fmt: skip
NODECLASS = {
    "metadata": {"name": "default", "uid": "uid-nc", "managedFields": [{"manager": "kubectl"}]},
    "spec": {
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "role": "KarpenterNodeRole-demo",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
    },
}
CONTROLLER_ENV = [
    {"name": "FEATURE_GATES", "value": "ReservedCapacity=true,SpotToSpotConsolidation=true,NodeRepair=false"},
    {"name": "RESERVED_ENIS", "value": "1"},
    {"name": "VM_MEMORY_OVERHEAD_PERCENT", "value": "0.1"},
    {"name": "MIN_VALUES_POLICY", "value": "BestEffort"},
    {"name": "PREFERENCE_POLICY", "value": "Ignore"},
    {"name": "IGNORE_DRA_REQUESTS", "value": "true"},
    {"name": "CLUSTER_CA_BUNDLE", "value": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tc2VjcmV0"},
    {"name": "CPU_REQUESTS", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu"}}},
]


def _pod_template(name: str, env: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": f"registry.example.com/{name}:1.0"}
    if env is not None:
        container["env"] = env
    return {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}}


def _workloads() -> dict[str, list[dict[str, Any]]]:
    """The kinds beyond the example file: the Karpenter controller, an app's workloads, an overlay."""
    app_env = [{"name": "DB_PASSWORD", "value": "hunter2"}]
    return {
        "Deployment": [
            {
                "metadata": {"name": "karpenter", "namespace": "kube-system",
                             "labels": {"app.kubernetes.io/name": "karpenter"}},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "karpenter"}},
                         "template": _pod_template("controller", CONTROLLER_ENV)},
            },
            {
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                         "template": _pod_template("web", app_env)},
            },
        ],
        "ReplicaSet": [{"metadata": {"name": "web-5d8f", "namespace": "default"},
                        "spec": {"replicas": 3, "template": _pod_template("web", app_env)}}],
        "StatefulSet": [{"metadata": {"name": "db", "namespace": "default"},
                         "spec": {"replicas": 1, "serviceName": "db", "template": _pod_template("db")}}],
        "Job": [{"metadata": {"name": "migrate", "namespace": "default"},
                 "spec": {"template": _pod_template("migrate", app_env)}}],
        "PodTemplate": [{"metadata": {"name": "batch", "namespace": "default"},
                         "template": _pod_template("batch", app_env)}],
        "PodDisruptionBudget": [{"metadata": {"name": "web", "namespace": "default"},
                                 "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}}],
        "NodeOverlay": [{"metadata": {"name": "price"},
                         "spec": {"requirements": [], "priceAdjustment": "-10%"}}],
    }  # fmt: skip


@dataclass
class Fault:
    """One injected answer for requests to ``path`` (with a ``continue`` token only, if ``on_continue``;
    without ``limit`` only, if ``without_limit``).

    ``action``: ``respond`` (``status``, ``headers``, ``body`` bytes or JSON), ``silence`` (never
    answer), ``stall`` (start the body, then never finish it), ``reset`` (close the connection with
    a TCP RST). Used ``times`` times, then gone.
    """

    path: str
    action: str = "respond"
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    on_continue: bool = False
    without_limit: bool = False  # only for a request without ``limit`` (a full list)
    times: int = 1


def status_body(code: int, reason: str, message: str = "") -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": code,
            "message": message}  # fmt: skip


class Recorded(BaseHTTPRequestHandler):
    """Serves recorded list responses with server-side pagination, like the API server."""

    lists: ClassVar[dict[str, list[dict[str, Any]]]] = {}
    list_version: ClassVar[dict[str, str]] = {}
    discovery: ClassVar[dict[str, dict[str, Any]]] = {}
    seen: ClassVar[list[str]] = []
    faults: ClassVar[list[Fault]] = []
    stop: ClassVar[threading.Event] = threading.Event()
    protocol_version = "HTTP/1.1"  # keep-alive, as the API server
    disable_nagle_algorithm = True  # headers and body in separate writes: no delayed-ACK stall

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def finish(self) -> None:
        with suppress(OSError):
            super().finish()

    def do_GET(self) -> None:
        url = urlparse(self.path)
        self.seen.append(self.path)
        assert self.headers.get("Authorization") == "Bearer recorded-token"
        query = parse_qs(url.query)
        for fault in self.faults:
            applies = (not fault.on_continue or "continue" in query) and (
                not fault.without_limit or "limit" not in query
            )
            if fault.path == url.path and fault.times > 0 and applies:
                fault.times -= 1
                self._fault(fault)
                return
        if url.path in self.discovery:
            self._send(200, self.discovery[url.path])
            return
        if url.path not in self.lists:
            self._send(404, status_body(404, "NotFound", "the server could not find the requested resource"))
            return
        items = self.lists[url.path]
        limit = int(query["limit"][0]) if "limit" in query else len(items) or 1
        start = int(query.get("continue", ["0"])[0])
        page = items[start : start + limit]
        meta: dict[str, Any] = {"resourceVersion": "1234"}
        if start + limit < len(items):
            meta["continue"] = str(start + limit)
        kind = next(k for k, p in KIND_PATH.items() if p == url.path)
        version = self.list_version.get(url.path, LIST_API_VERSION[kind])
        self._send(200, {"apiVersion": version, "kind": f"{kind}List", "metadata": meta, "items": page})

    def _fault(self, fault: Fault) -> None:
        if fault.action == "silence":
            self.stop.wait(30)
            self.close_connection = True
            return
        if fault.action == "stall":  # headers and the start of the body, then silence
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "5000")
            self.end_headers()
            self.wfile.write(b'{"kind": "PodList", "items": [')
            self.wfile.flush()
            self.stop.wait(30)
            self.close_connection = True
            return
        if fault.action == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        if "Content-Length" in fault.headers:  # a body cut short: the connection ends with it
            self.close_connection = True
        self._send(fault.status, fault.body, fault.headers)

    def _send(self, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Content-Length": str(len(data)), **(headers or {})}
        self.send_response(code)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def serve() -> Iterator[str]:
    """The server's URL while the block runs."""
    items = json.loads(EXAMPLE.read_text())["items"]
    lists: dict[str, list[dict[str, Any]]] = {p: [] for p in KIND_PATH.values()}
    for item in items:
        stripped = {k: v for k, v in item.items() if k not in ("kind", "apiVersion")}  # list items omit them
        lists[KIND_PATH[item["kind"]]].append(stripped)
    lists[KIND_PATH["EC2NodeClass"]].append(NODECLASS)
    lists[KIND_PATH["StorageClass"]].append({"metadata": {"name": "gp3"}, "provisioner": "ebs.csi.aws.com"})
    for kind, extra in _workloads().items():
        lists[KIND_PATH[kind]].extend(extra)
    Recorded.lists = lists
    Recorded.list_version = {}
    Recorded.discovery = dict(DISCOVERY)
    Recorded.seen = []
    Recorded.faults = []
    Recorded.stop = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorded)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        Recorded.stop.set()
        server.shutdown()
        server.server_close()


def kubeconfig_for(api_server: str, tmp_path: Path) -> Path:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "rec", "cluster": {"server": api_server}}],
                "users": [{"name": "rec", "user": {"token": "recorded-token"}}],
                "contexts": [{"name": "rec", "context": {"cluster": "rec", "user": "rec"}}],
                "current-context": "rec",
            }
        )
    )
    return kubeconfig
