"""The Kubernetes Secret holding a rendered OSC (Gardener's ``osc-result-<name>`` contract).

Gardener stores the provision user data in Secret ``osc-result-<osc name>`` under data key
``cloud_config`` (``status.cloudConfig.secretRef``). The Pulumi side creates that Secret from
:func:`result_secret`; when the init-script pattern was used the same Secret also carries the full
bash rendering under ``full_config``, which the node's init script fetches. Pure: returns a plain
manifest mapping (base64 ``data``), never logs its values.
"""

from __future__ import annotations

import base64
from typing import Any, Final

from nodewright.osc.initscript import FULL_CONFIG_KEY, RESULT_NAMESPACE, result_secret_name
from nodewright.osc.render import RenderResult

CLOUD_CONFIG_KEY: Final = "cloud_config"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def result_secret(
    result: RenderResult,
    *,
    namespace: str | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``v1`` ``Secret`` ``osc-result-<name>``: ``cloud_config`` (+ ``full_config`` for the init pattern).

    ``namespace`` defaults to the one the init script reads from (``result.secret_namespace``,
    ``kube-system`` unless :class:`~nodewright.osc.initscript.InitOptions` said otherwise).
    """
    data = {CLOUD_CONFIG_KEY: _b64(result.content)}
    if result.full_config is not None:
        data[FULL_CONFIG_KEY] = _b64(result.full_config)
    metadata: dict[str, Any] = {
        "name": result_secret_name(result.name),
        "namespace": namespace or result.secret_namespace or RESULT_NAMESPACE,
    }
    if labels:
        metadata["labels"] = dict(sorted(labels.items()))
    return {"apiVersion": "v1", "kind": "Secret", "metadata": metadata, "type": "Opaque", "data": data}
