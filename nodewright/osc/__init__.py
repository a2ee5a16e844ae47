"""Gardener OperatingSystemConfigs rendered into node user data (cloud-init, bash, Ignition 3.3.0).

Public API (everything else is internal):

* :func:`load_osc` / :func:`load_osc_documents` -> :class:`LoadedOSC` (the validated
  :class:`OperatingSystemConfig` plus the Secrets given beside it); every malformed field is
  reported at once as ``<file>:<json path>: <what>``.
* :func:`render_osc` -> :class:`RenderResult` (pure, plus warnings on the ``nodewright`` logger);
  applies the 16384-byte rule and switches to the init-script pattern (:class:`InitOptions`).
* :func:`node_plan` -> :class:`NodePlan`, :func:`render_plan` (format switch over a plan).
* :func:`reconcile_changes` -> :class:`ReconcileChanges` (units to restart/stop, files changed).
* :func:`result_secret` -> the ``osc-result-<name>`` Secret manifest for the Pulumi side.

Boundary: pure core (no click, no pulumi); the only I/O is reading input files in the loader.
"""

from __future__ import annotations

from nodewright.osc.initscript import InitOptions, result_secret_name
from nodewright.osc.loading import LoadedOSC, load_osc, load_osc_documents
from nodewright.osc.models import OperatingSystemConfig, ReferencedSecret
from nodewright.osc.nodeplan import NodePlan, node_plan
from nodewright.osc.reconcile import ReconcileChanges, diff_plans, reconcile_changes
from nodewright.osc.render import FORMATS, USER_DATA_LIMIT, Format, RenderResult, render_osc, render_plan
from nodewright.osc.result import CLOUD_CONFIG_KEY, result_secret

__all__ = [
    "CLOUD_CONFIG_KEY",
    "FORMATS",
    "USER_DATA_LIMIT",
    "Format",
    "InitOptions",
    "LoadedOSC",
    "NodePlan",
    "OperatingSystemConfig",
    "ReconcileChanges",
    "ReferencedSecret",
    "RenderResult",
    "diff_plans",
    "load_osc",
    "load_osc_documents",
    "node_plan",
    "reconcile_changes",
    "render_osc",
    "render_plan",
    "result_secret",
    "result_secret_name",
]
