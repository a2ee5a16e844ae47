"""nodewright: Karpenter's provisioning brain as a declarative GitOps pipeline.

The package is the pure core: domain model (`api`), instance-type catalog (`catalog`), cluster
state (`cluster`), scheduling simulation (`scheduling`), drift hashing (`drift`), user data
(`userdata`), Gardener OperatingSystemConfigs (`osc`), NodePool health (`health`), policy rules
(`policy`) and the offline preview (`preview`). Only `nodewright.cli` imports click, and only
`nodewright.preview` imports pulumi; the Pulumi program (`components/`, `policies/`) adapts it.
"""

__version__ = "0.1.0"
