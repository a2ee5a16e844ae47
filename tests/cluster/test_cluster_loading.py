"""Cluster state from kubectl files and from a live API server (recorded responses on loopback)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlparse

import pytest

from nodewright.cluster import load_cluster
from nodewright.cluster.live import load_live
from nodewright.errors import NodewrightError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "stacks/examples/cluster.json"
KIND_PATH = {
    "Pod": "/api/v1/pods",
    "Node": "/api/v1/nodes",
    "DaemonSet": "/apis/apps/v1/daemonsets",
    "NodeClaim": "/apis/karpenter.sh/v1/nodeclaims",
    "NodePool": "/apis/karpenter.sh/v1/nodepools",
}


def test_example_cluster_file() -> None:
    state = load_cluster(EXAMPLE)
    assert len(state.nodes) == 2
    assert len(state.nodeclaims) == 2
    assert len(state.daemonsets) == 3
    assert state.node("ip-10-0-1-17.ec2.internal") is not None
    assert len(state.pods_on("ip-10-0-1-17.ec2.internal")) == 3


def test_pod_with_bad_quantity_names_path(tmp_path: Path) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1..5"}}}]},
            }
        ],
    }
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(body))
    with pytest.raises(NodewrightError) as info:
        load_cluster(path)
    (line,) = info.value.lines()
    assert line.startswith(f"{path}:items[0].spec.containers[0].resources.requests.cpu: invalid quantity")


def test_pod_without_name(tmp_path: Path) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(
        json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "spec": {}}]}
        )
    )
    with pytest.raises(NodewrightError, match=r"items\[0\]\.metadata\.name: a Pod needs metadata.name"):
        load_cluster(path)


class _Recorded(BaseHTTPRequestHandler):
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
        self._send(200, {"apiVersion": "v1", "kind": "List", "metadata": meta, "items": page})

    def _send(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def api_server() -> Iterator[str]:
    items = json.loads(EXAMPLE.read_text())["items"]
    lists: dict[str, list[dict[str, Any]]] = {p: [] for p in KIND_PATH.values()}
    for item in items:
        stripped = {k: v for k, v in item.items() if k not in ("kind", "apiVersion")}  # list items omit them
        lists[KIND_PATH[item["kind"]]].append(stripped)
    _Recorded.lists = lists
    _Recorded.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorded)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_live_loader_against_recorded_api(
    api_server: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
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
    live = load_live(kubeconfig=str(kubeconfig), page_size=20)
    from_file = load_cluster(EXAMPLE)
    assert [p.key for p in live.pods] == [p.key for p in from_file.pods]
    for kind in ("pods", "nodes", "nodeclaims", "daemonsets"):
        assert [o.model_dump() for o in getattr(live, kind)] == [
            o.model_dump() for o in getattr(from_file, kind)
        ]
    assert live.pods[0].origin_file == "live:current-context"
    assert live.pods[0].origin_path() == "/api/v1/pods[0]"
    assert any("continue=20" in s for s in _Recorded.seen)  # pagination followed
    assert "cannot list CSINode (HTTP 404)" in caplog.text
