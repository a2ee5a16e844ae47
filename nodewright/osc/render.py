"""One entry point to render an OSC in a format, with the 16 KB user-data rule applied.

:func:`render_plan` is the pure format switch. :func:`render_osc` plans the OSC, renders it, and
for purpose ``provision`` checks the size: above :data:`USER_DATA_LIMIT` bytes it switches to the
Gardener init-script pattern (:mod:`nodewright.osc.initscript`) and says so with a warning on the
``nodewright`` logger; the full config (bash) then travels in the result Secret
(:mod:`nodewright.osc.result`). Warnings name files and sizes, never contents.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Final, Literal

from nodewright.api.amifamily import USER_DATA_MAX_BYTES
from nodewright.errors import RenderError
from nodewright.osc.initscript import (
    FULL_CONFIG_KEY,
    RESULT_NAMESPACE,
    InitOptions,
    init_plan,
    options_from_plan,
    result_secret_name,
)
from nodewright.osc.loading import LoadedOSC
from nodewright.osc.nodeplan import NodePlan, node_plan
from nodewright.osc.reconcile import ReconcileChanges, reconcile_changes
from nodewright.osc.render_bash import render_bash
from nodewright.osc.render_cloudinit import render_cloudinit
from nodewright.osc.render_ignition import render_ignition

log = logging.getLogger("nodewright")

Format = Literal["cloud-init", "bash", "ignition"]
FORMATS: Final[tuple[Format, ...]] = ("cloud-init", "bash", "ignition")
USER_DATA_LIMIT: Final = USER_DATA_MAX_BYTES  # EC2's limit, owned by nodewright.api.amifamily
WARN_RATIO: Final = 0.9


def render_plan(node_plan: NodePlan, fmt: Format) -> str:
    """Render ``node_plan`` in ``fmt`` (pure)."""
    if fmt == "cloud-init":
        return render_cloudinit(node_plan)
    if fmt == "bash":
        return render_bash(node_plan)
    if fmt == "ignition":
        return render_ignition(node_plan)
    raise RenderError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


@dataclass(frozen=True, kw_only=True)
class RenderResult:
    """A rendered OSC. ``content`` is the user data; ``full_config`` is set for the init pattern."""

    name: str
    namespace: str | None
    purpose: str
    format: Format
    content: str = field(repr=False)
    init_pattern: bool = False
    full_config: str | None = field(default=None, repr=False)
    secret_namespace: str = RESULT_NAMESPACE
    placeholders: tuple[str, ...] = ()
    secret_files: tuple[str, ...] = field(default=())
    changes: ReconcileChanges | None = None
    """What a node running the previous OSC reconciles (``render_osc(previous=...)``), else None."""

    @property
    def bytes(self) -> int:
        return len(self.content.encode("utf-8"))

    def as_dict(self) -> dict[str, object]:
        """The ``-o json`` object of ``nodewright render osc``."""
        out: dict[str, object] = {
            "format": self.format,
            "bytes": self.bytes,
            "content": self.content,
            "name": self.name,
            "purpose": self.purpose,
            "initPattern": self.init_pattern,
            "placeholders": list(self.placeholders),
            "secretFiles": list(self.secret_files),
        }
        if self.full_config is not None:
            out["fullConfigBytes"] = len(self.full_config.encode("utf-8"))
            out["fullConfig"] = self.full_config
            out["resultSecret"] = {
                "namespace": self.secret_namespace,
                "name": result_secret_name(self.name),
                "key": FULL_CONFIG_KEY,
            }
        if self.changes is not None:
            out["changes"] = self.changes.summary()
        return out


def render_osc(
    loaded: LoadedOSC,
    fmt: Format,
    *,
    init: InitOptions | None = None,
    host_name: str | None = None,
    limit: int = USER_DATA_LIMIT,
    previous: LoadedOSC | None = None,
) -> RenderResult:
    """Plan and render ``loaded``; provision results over ``limit`` bytes use the init pattern.

    ``previous`` (the OSC a node already runs) adds the reconcile ``changes`` against it.
    """
    result = _render(loaded, fmt, init=init, host_name=host_name, limit=limit)
    if previous is None:
        return result
    return replace(result, changes=reconcile_changes(previous, loaded, host_name=host_name))


def _render(
    loaded: LoadedOSC, fmt: Format, *, init: InitOptions | None, host_name: str | None, limit: int
) -> RenderResult:
    full = node_plan(loaded, host_name=host_name)
    content = render_plan(full, fmt)
    size = len(content.encode("utf-8"))
    common = {
        "name": full.name,
        "namespace": full.namespace,
        "purpose": full.purpose,
        "format": fmt,
        "placeholders": tuple(full.placeholders()),
        "secret_files": tuple(full.secret_paths()),
    }
    if full.purpose != "provision" or size <= limit:
        if full.purpose == "provision" and size > limit * WARN_RATIO:
            log.warning(
                "OperatingSystemConfig %s renders to %d bytes of %s, over 90%% of the %d-byte user-data "
                "limit (placeholders grow when substituted)",
                full.name,
                size,
                fmt,
                limit,
            )
        return RenderResult(content=content, **common)  # type: ignore[arg-type]
    options = init or options_from_plan(full)
    if options is None:
        raise RenderError(
            f"{loaded.file}: OperatingSystemConfig {full.name} renders to {size} bytes of {fmt}, over the "
            f"{limit}-byte user-data limit, and the init-script pattern needs the API server the node "
            "fetches the full config from: pass --api-server (and --ca-file), or include "
            "gardener-node-agent's /var/lib/gardener-node-agent/config.yaml with apiServer.server"
        )
    small = render_plan(init_plan(full, options), fmt)
    small_size = len(small.encode("utf-8"))
    if small_size > limit:
        raise RenderError(
            f"{loaded.file}: even the init-script user data of {full.name} is {small_size} bytes (> {limit}); "
            "shrink the CA bundle"
        )
    log.warning(
        "OperatingSystemConfig %s renders to %d bytes of %s (> %d, the user-data limit): switched to "
        "the Gardener init-script pattern (%d bytes); the node fetches the full config from Secret "
        "%s/%s key %s",
        full.name,
        size,
        fmt,
        limit,
        small_size,
        options.namespace,
        result_secret_name(full.name),
        FULL_CONFIG_KEY,
    )
    return RenderResult(
        content=small,
        init_pattern=True,
        full_config=render_bash(full),
        secret_namespace=options.namespace,
        **common,  # type: ignore[arg-type]
    )
