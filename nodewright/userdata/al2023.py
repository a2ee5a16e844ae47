"""AL2023 (nodeadm) user data: the user's entries first, Karpenter's NodeConfig last so it wins.

Port of ``bootstrap/nodeadm.go`` and ``bootstrap/mime/mime.go`` (aws/karpenter-provider-aws v1.14.1
``pkg/providers/amifamily/bootstrap/``). User MIME parts keep only their Content-Type; a bare YAML mapping becomes an
``application/node.eks.aws`` part, anything else a shell script. Karpenter's NodeConfig is the
JSON of nodeadm's types written as sorted-key YAML (sigs.k8s.io/yaml), prefixed with
``# Karpenter Generated NodeConfig``. Beyond upstream, a NodeConfig part that nodeadm could not
read (not YAML, not a mapping) is an error here rather than a node that never joins.
"""

from __future__ import annotations

import base64
import binascii
import gzip
from typing import Any, Final

import yaml

from nodewright import reader
from nodewright.userdata.al2 import node_label_arg
from nodewright.userdata.gomime import (
    SHELL_SCRIPT,
    GoMIMEError,
    MediaTypeError,
    MessageError,
    NotMultipartError,
    Part,
    check_no_boundary,
    looks_like_mime,
    read_multipart,
    write_multipart,
)
from nodewright.userdata.options import RAID0, Options, UserDataError

NODE_CONFIG: Final = "application/node.eks.aws"
HEADER: Final = "# Karpenter Generated NodeConfig\n"
NODEADM_API_VERSION: Final = "node.eks.aws/v1alpha1"


_NO_FOLDING: Final = 1 << 30


def _dump(data: Any) -> str:
    """Block style, sorted keys, sequences not indented under their key, no line folding: what
    go-yaml v2 writes (:func:`nodewright.reader.dump_yaml`: its fast path for plain words, else
    libyaml's emitter)."""
    return reader.dump_yaml(data, sort_keys=True, width=_NO_FOLDING)


def node_config(options: Options) -> dict[str, Any]:
    """Karpenter's NodeConfig as the JSON object Go marshals (before YAML conversion)."""
    if not options.cluster_cidr:
        raise UserDataError(
            "resolving cluster CIDR: AL2023 needs the cluster's service CIDR (clusterCIDR in the cluster info)",
            path="clusterCIDR",
        )
    cluster: dict[str, Any] = {}
    if options.cluster_endpoint:
        cluster["apiServerEndpoint"] = options.cluster_endpoint
    if options.ca_bundle:
        try:
            raw = base64.b64decode(options.ca_bundle.replace("\n", "").replace("\r", ""), validate=True)
        except (binascii.Error, ValueError):
            raise UserDataError(
                "generating NodeConfig, decoding CABundle: the CA bundle is not valid base64; pass it base64-encoded",
                path="caBundle",
            ) from None
        if raw:
            cluster["certificateAuthority"] = base64.b64encode(raw).decode()
    cluster["cidr"] = options.cluster_cidr
    if options.cluster_name:
        cluster["name"] = options.cluster_name
    kubelet_config: dict[str, Any] = options.kubelet.to_json() if options.kubelet else {}
    if options.taints:
        kubelet_config["registerWithTaints"] = [
            {"effect": t.effect, "key": t.key, **({"value": t.value} if t.value else {})}
            for t in options.taints
        ]
    kubelet: dict[str, Any] = {}
    if kubelet_config:
        kubelet["config"] = kubelet_config
    label_arg = node_label_arg(options)
    if label_arg:
        kubelet["flags"] = [label_arg]
    local_storage: dict[str, Any] = {"strategy": RAID0} if options.instance_store_policy == RAID0 else {}
    return {
        "apiVersion": NODEADM_API_VERSION,
        "kind": "NodeConfig",
        "metadata": {},
        "spec": {
            "cluster": cluster,
            "containerd": {},
            "instance": {"localStorage": local_storage},
            "kubelet": kubelet,
        },
    }


def node_config_yaml(options: Options) -> str:
    """``getNodeConfigYAML``: the part body Karpenter appends last."""
    return HEADER + _dump(node_config(options))


def is_yaml_mapping(text: str) -> bool:
    """sigs.k8s.io/yaml ``Unmarshal`` into ``map[string]any`` succeeds: a mapping or null."""
    try:
        data = reader.safe_load(text)
    except yaml.YAMLError:
        return False
    return data is None or isinstance(data, dict)


def _decode_part(body: str) -> str:
    """What nodeadm reads from a NodeConfig part: base64 and gzip are undone when present."""
    raw = body.encode()
    try:
        raw = base64.b64decode(body.replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return body
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except OSError:
            return body
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return body


def check_node_config_part(body: str, *, where: str) -> None:
    """Raise when nodeadm could not read a NodeConfig part (not YAML, or not a mapping)."""
    text = body if is_yaml_mapping(body) else _decode_part(body)
    try:
        data = reader.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UserDataError(
            f"{where}: the NodeConfig is not valid YAML{at}: {problem}; nodeadm would fail to read it",
        ) from None
    if data is not None and not isinstance(data, dict):
        raise UserDataError(
            f"{where}: the NodeConfig is a YAML {type(data).__name__}, not a mapping; "
            f"write apiVersion: {NODEADM_API_VERSION}, kind: NodeConfig, spec: ..."
        )


def looks_like_node_config(text: str) -> bool:
    return NODEADM_API_VERSION in text or "kind: NodeConfig" in text


def user_entries(user_data: str | None) -> list[Part]:
    """``parseUserData``: the user's entries, each with only its Content-Type header."""
    if not user_data:
        return []
    if looks_like_mime(user_data):
        try:
            parts = read_multipart(user_data)
        except MediaTypeError as exc:
            raise UserDataError(
                f"parsing custom UserData, archive doesn't have Content-Type header, {exc}"
            ) from None
        except NotMultipartError:
            raise UserDataError(
                "parsing custom UserData, archive is not in multipart format (use multipart/mixed)"
            ) from None
        except MessageError as exc:
            raise UserDataError(f"parsing custom UserData, {exc}") from None
        except GoMIMEError as exc:
            raise UserDataError(f"parsing custom UserData, parsing content, {exc}") from None
        entries = [Part(headers=(("Content-Type", p.get("Content-Type")),), body=p.body) for p in parts]
        for index, entry in enumerate(entries):
            if entry.get("Content-Type").split(";")[0].strip().lower() == NODE_CONFIG:
                check_node_config_part(entry.body, where=f"MIME part {index + 1}")
        return entries
    if is_yaml_mapping(user_data):
        return [Part(headers=(("Content-Type", NODE_CONFIG),), body=user_data)]
    if looks_like_node_config(user_data) and not user_data.lstrip().startswith("#!"):
        check_node_config_part(user_data, where="user data")
    return [Part(headers=(("Content-Type", SHELL_SCRIPT),), body=user_data)]


def render_al2023(options: Options) -> str:
    """The decoded AL2023 user data: user entries, then Karpenter's NodeConfig."""
    config = node_config_yaml(options)
    entries = user_entries(options.custom_user_data)
    entries.append(Part(headers=(("Content-Type", NODE_CONFIG),), body=config))
    _check(entries)
    return write_multipart(entries)


def _check(parts: list[Part]) -> None:
    try:
        check_no_boundary(parts)
    except GoMIMEError as exc:
        raise UserDataError(str(exc)) from None
