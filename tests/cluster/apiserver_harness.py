"""A loopback HTTP server speaking the Kubernetes API with recorded responses (test harness).

Serves the example cluster state (stacks/examples/cluster.json, plus an EC2NodeClass and a
StorageClass) as the API server does: one typed list per kind (``PodList``, ``NodeList``...: items
without kind/apiVersion), server-side pagination with ``limit``/``continue``, 404 for kinds it does
not serve, a bearer token checked on every request. Used by the live loader, ``cluster snapshot``
and README walkthrough tests; never a mocked client.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
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
    "NodeClaim": "/apis/karpenter.sh/v1/nodeclaims",
    "NodePool": "/apis/karpenter.sh/v1/nodepools",
    "EC2NodeClass": "/apis/karpenter.k8s.aws/v1/ec2nodeclasses",
    "StorageClass": "/apis/storage.k8s.io/v1/storageclasses",
}
LIST_API_VERSION = {"Pod": "v1", "Node": "v1", "DaemonSet": "apps/v1", "NodeClaim": "karpenter.sh/v1",
                    "NodePool": "karpenter.sh/v1", "EC2NodeClass": "karpenter.k8s.aws/v1",
                    "StorageClass": "storage.k8s.io/v1"}  # fmt: skip
NODECLASS = {
    "metadata": {"name": "default", "uid": "uid-nc", "managedFields": [{"manager": "kubectl"}]},
    "spec": {
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "role": "KarpenterNodeRole-demo",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
    },
}


class Recorded(BaseHTTPRequestHandler):
    """Serves recorded list responses with server-side pagination, like the API server."""

    lists: ClassVar[dict[str, list[dict[str, Any]]]] = {}
    seen: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        url = urlparse(self.path)
        self.seen.append(self.path)
        assert self.headers.get("Authorization") == "Bearer recorded-token"
        if url.path not in self.lists:
            self._send(
                404,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "reason": "NotFound",
                    "code": 404,
                },
            )
            return
        query = parse_qs(url.query)
        limit = int(query.get("limit", ["500"])[0])
        start = int(query.get("continue", ["0"])[0])
        items = self.lists[url.path]
        page = items[start : start + limit]
        meta: dict[str, Any] = {"resourceVersion": "1234"}
        if start + limit < len(items):
            meta["continue"] = str(start + limit)
        kind = next(k for k, p in KIND_PATH.items() if p == url.path)
        self._send(
            200,
            {"apiVersion": LIST_API_VERSION[kind], "kind": f"{kind}List", "metadata": meta, "items": page},
        )

    def _send(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
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
    Recorded.lists = lists
    Recorded.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorded)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
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
