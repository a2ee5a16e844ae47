"""What a launch template's user data registers the node with, read per format (for the policies).

Pure, no ``pulumi``, never raises on odd input (a policy must judge any user data, not crash).
Formats, as ``nodewright.userdata`` renders them and as users write them (Custom):

* **MIME** multi-part (AL2, AL2023, user archives): each part on its own, quoted-printable and
  base64 transfer encodings decoded;
* **NodeConfig** (AL2023 nodeadm, ``application/node.eks.aws`` parts or bare YAML):
  ``spec.kubelet.config.registerWithTaints`` and the ``--node-labels`` /
  ``--register-with-taints`` entries of ``spec.kubelet.flags``;
* **Bottlerocket TOML**: ``settings.kubernetes.node-labels`` and ``node-taints``
  (``key = ["value:Effect", ...]``);
* **scripts** (AL2 ``bootstrap.sh --kubelet-extra-args``, Windows ``-KubeletExtraArgs``, Custom
  shells, cloud-configs): the kubelet flags ``--node-labels=`` / ``--register-with-taints=``.
  Script parts also keep their text in :attr:`Registration.opaque`, so rules can fall back to a
  textual match for Custom user data that writes a kubelet configuration some other way.

Labels and taints are the union over all parts (nodeadm appends flags and Karpenter's NodeConfig
comes last; a kubelet merges repeated ``--node-labels``).
Cluster CA values (``certificateAuthority``, ``cluster-certificate``, ``--b64-cluster-ca``,
``-Base64ClusterCA``) are not credentials: :func:`without_cluster_ca` blanks them before the
credential scan so a random base64 run can never look like a key.
"""

from __future__ import annotations

import base64
import binascii
import email.parser
import email.policy
import quopri
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import yaml

from nodewright import reader, redact

NODECONFIG_CONTENT_TYPE: Final = "application/node.eks.aws"
_LABELS_FLAG: Final = re.compile(r"""--node-labels(?:=|\s+)\\?["']?([^\s"'\\]+)""")
_TAINTS_FLAG: Final = re.compile(r"""--register-with-taints(?:=|\s+)\\?["']?([^\s"'\\]+)""")


@dataclass(frozen=True, kw_only=True)
class Registration:
    """Labels and taints (key, value, effect) the user data registers the node with."""

    labels: Mapping[str, str] = field(default_factory=dict)
    taints: frozenset[tuple[str, str, str]] = frozenset()
    formats: tuple[str, ...] = ()  # mime, nodeconfig, toml, script (in reading order)
    opaque: tuple[str, ...] = ()  # script / unknown parts' text, for textual fallbacks

    def has_label(self, key: str, value: str) -> bool:
        return self.labels.get(key) == value

    def has_taint(self, key: str, value: str | None, effect: str) -> bool:
        """``value`` None matches any value (Karpenter matches startup taints by key and effect)."""
        return any(k == key and e == effect and (value is None or v == value) for k, v, e in self.taints)


class _Acc:
    def __init__(self) -> None:
        self.labels: dict[str, str] = {}
        self.taints: set[tuple[str, str, str]] = set()
        self.formats: list[str] = []
        self.opaque: list[str] = []

    def flags(self, text: str) -> None:
        for m in _LABELS_FLAG.finditer(text):
            for item in m.group(1).split(","):
                k, sep, v = item.partition("=")
                if sep and k:
                    self.labels[k] = v
        for m in _TAINTS_FLAG.finditer(text):
            for item in m.group(1).split(","):
                self.taint_string(item)

    def taint_string(self, item: str, *, key: str | None = None) -> None:
        """``key[=value]:Effect`` (kubelet flag) or, with ``key``, Bottlerocket's ``value:Effect``."""
        head, sep, effect = item.rpartition(":")
        if not sep or not effect:
            return
        if key is None:
            key, _, value = head.partition("=")
        else:
            value = head
        if key:
            self.taints.add((key, value, effect))

    def result(self) -> Registration:
        return Registration(
            labels=dict(self.labels),
            taints=frozenset(self.taints),
            formats=tuple(self.formats),
            opaque=tuple(self.opaque),
        )


def _mime_parts(text: str) -> Iterator[tuple[str, str]] | None:
    head = text.lstrip("\r\n")[:512].lower()
    if not (head.startswith("mime-version:") or head.startswith("content-type: multipart")):
        return None
    msg = email.parser.Parser(policy=email.policy.compat32).parsestr(text)
    if not msg.is_multipart():
        return None

    def parts() -> Iterator[tuple[str, str]]:
        for part in msg.walk():
            if part.is_multipart():
                continue
            raw = part.get_payload()
            body = raw if isinstance(raw, str) else ""
            cte = str(part.get("Content-Transfer-Encoding", "")).lower()
            try:
                if cte == "base64":
                    body = base64.b64decode(body).decode("utf-8", errors="replace")
                elif cte == "quoted-printable":
                    body = quopri.decodestring(body.encode()).decode("utf-8", errors="replace")
            except (binascii.Error, ValueError):
                pass
            yield part.get_content_type(), body

    return parts()


def _nodeconfig(acc: _Acc, text: str) -> bool:
    try:
        docs = [d for d in reader.safe_load_all(text) if isinstance(d, Mapping)]
    except yaml.YAMLError:
        return False
    if not docs or not any(d.get("kind") == "NodeConfig" for d in docs):
        return False
    acc.formats.append("nodeconfig")
    for doc in docs:
        kubelet = (doc.get("spec") or {}).get("kubelet") if isinstance(doc.get("spec"), Mapping) else None
        if not isinstance(kubelet, Mapping):
            continue
        config = kubelet.get("config")
        if isinstance(config, Mapping):
            for t in config.get("registerWithTaints") or []:
                if isinstance(t, Mapping) and t.get("key") and t.get("effect"):
                    acc.taints.add((str(t["key"]), str(t.get("value") or ""), str(t["effect"])))
        for flag in kubelet.get("flags") or []:
            acc.flags(str(flag))
    return True


def _toml(acc: _Acc, text: str) -> bool:
    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return False
    settings = doc.get("settings")
    if not isinstance(settings, Mapping):
        return False
    acc.formats.append("toml")
    k8s: Any = settings.get("kubernetes") or {}
    if not isinstance(k8s, Mapping):
        return True
    node_labels = k8s.get("node-labels")
    if isinstance(node_labels, Mapping):
        acc.labels.update({str(k): str(v) for k, v in node_labels.items()})
    node_taints = k8s.get("node-taints")
    if isinstance(node_taints, Mapping):
        for key, values in node_taints.items():
            for item in values if isinstance(values, list) else [values]:
                acc.taint_string(str(item), key=str(key))
    return True


def _one(acc: _Acc, text: str, content_type: str = "") -> None:
    if (content_type == NODECONFIG_CONTENT_TYPE or "NodeConfig" in text) and _nodeconfig(acc, text):
        return
    if not content_type and _toml(acc, text):
        return
    acc.formats.append("script")
    acc.opaque.append(text)
    acc.flags(text)


def read_registration(text: str) -> Registration:
    """The labels and taints ``text`` (decoded user data of any family) registers the node with."""
    acc = _Acc()
    parts = _mime_parts(text)
    if parts is None:
        _one(acc, text)
    else:
        acc.formats.append("mime")
        for content_type, body in parts:
            _one(acc, body, content_type)
    return acc.result()


def without_cluster_ca(text: str, *, replacement: str = "<cluster-ca>") -> str:
    """``text`` with every cluster CA value replaced (it is public, not a credential; previews print
    ``[secret]`` for it even when the renderer re-encoded or line-wrapped it): the CA detectors of
    :mod:`nodewright.redact`."""
    return redact.without_public_ca(text, replacement=replacement)
