"""Pulumi ComponentResources over the nodewright core (NodeClass, NodePool, Capacity, OSC).

Type tokens ``nodewright:index:<Name>``; children ``parent=self`` named ``f"{name}-..."``; outputs
declared on the class; ``register_outputs`` last. Pure planning lives in :mod:`components.plan`
and :mod:`components.families` (no ``pulumi`` import) so the CLI and tests share it.
"""
