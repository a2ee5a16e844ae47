"""nodewright: Karpenter's provisioning brain as a declarative GitOps pipeline.

The package is the pure core: domain model (`api`), instance-type catalog (`catalog`), cluster
state (`cluster`), scheduling simulation (`scheduling`), drift hashing (`drift`), user data
(`userdata`), Gardener OperatingSystemConfigs (`osc`), NodePool health (`health`), policy rules
(`policy`) and the offline preview (`preview`). Only `nodewright.cli` imports click, and only
`nodewright.preview` imports pulumi; the Pulumi program, its components and the policy pack entry
(the `nodewright_pulumi` package of the same distribution) adapt it.
"""

from typing import Any

__version__: str  # resolved by __getattr__ below


def __getattr__(name: str) -> Any:
    """``__version__``: the installed distribution's (importlib.metadata), read on first use only
    (the metadata scan costs start-up time every command would pay)."""
    if name != "__version__":
        raise AttributeError(f"module 'nodewright' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("nodewright")
    except PackageNotFoundError:  # a source tree on sys.path without an install
        found = "0+unknown"
    globals()["__version__"] = found
    return found
