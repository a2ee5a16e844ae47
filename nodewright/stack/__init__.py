"""The stack plan: what the Pulumi program declares, computed by pure core functions.

* :func:`read_settings` (stack config ``nodewright:<key>``) -> :class:`Settings`;
* :func:`build_stack_plan` (settings + the stack's files) -> :class:`StackPlan`: NodeClasses with their
  launch templates (one per distinct user data), NodePools stamped with drift hashes, fleet-mode
  claims from the reviewed claims file, OperatingSystemConfig result Secrets, per-pool health;
* each launch template's :class:`LaunchTemplateSpec` (re-exported from
  :mod:`nodewright.userdata.launch_template`) is what the NodeClass component maps onto
  ``aws.ec2.LaunchTemplate``.

Boundary: no ``pulumi`` import; ``components/`` adapt a plan into ComponentResources.
"""

from nodewright.stack.build import build_stack_plan
from nodewright.stack.model import (
    ClaimPlan,
    ClusterSettings,
    LaunchTemplatePlan,
    NodeClassPlan,
    NodePoolPlan,
    OscPlan,
    PoolHealthView,
    Settings,
    StackPlan,
    read_settings,
)
from nodewright.userdata.launch_template import BlockDeviceSpec, LaunchTemplateSpec, NetworkInterfaceSpec

__all__ = [
    "BlockDeviceSpec",
    "ClaimPlan",
    "ClusterSettings",
    "LaunchTemplatePlan",
    "LaunchTemplateSpec",
    "NetworkInterfaceSpec",
    "NodeClassPlan",
    "NodePoolPlan",
    "OscPlan",
    "PoolHealthView",
    "Settings",
    "StackPlan",
    "build_stack_plan",
    "read_settings",
]
