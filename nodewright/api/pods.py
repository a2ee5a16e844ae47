"""Building many Pod models fast: pods repeat their ``spec`` and ``status`` (the pods of one workload;
a 20,000-pod cluster state has a few hundred distinct ones), so each distinct part is validated
once and its frozen model shared, as a DaemonSet's pods share its template. The result equals the
pod validated alone; a pod that does not validate takes the one-pod path, which reports it.

Boundary: model building only; reading documents and reporting problems is :mod:`.loading`'s.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable
from typing import Any, Final

from pydantic import ValidationError

from nodewright.api.base import KubeModel
from nodewright.api.core import Pod, PodSpec, PodStatus
from nodewright.api.documents import Document
from nodewright.errors import Problem

PodParts = dict[tuple[str, bytes], KubeModel]
"""The validated parts seen so far, by part name and the part's marshalled bytes."""

_SHARED: Final[tuple[tuple[str, type[KubeModel]], ...]] = (("spec", PodSpec), ("status", PodStatus))


def _marshalled(value: Any) -> bytes | None:
    """The bytes of plain data (equal bytes: equal data), or None when marshal cannot write it (a
    YAML timestamp): such a part is not shared."""
    try:
        return marshal.dumps(value)
    except ValueError:
        return None


def build_pod(
    doc: Document,
    parts: PodParts,
    alone: Callable[[Document], tuple[Pod | None, list[Problem]]],
) -> tuple[Pod | None, list[Problem]]:
    """The Pod of ``doc`` with its origin set, sharing the parts in ``parts`` (and adding its own);
    on any validation error, ``alone(doc)``: the one-pod path and its problems."""
    shared: dict[str, Any] = {}
    try:
        for name, model in _SHARED:
            value = doc.body.get(name)
            data = _marshalled(value) if type(value) is dict else None
            if data is not None:
                key = (name, data)
                got = parts.get(key)
                if got is None:
                    got = parts[key] = model.model_validate(value)
                shared[name] = got
        pod = Pod.model_validate({**doc.body, **shared} if shared else doc.body)
    except ValidationError:
        return alone(doc)
    pod.set_origin(doc.file, doc.path)
    return pod, []
