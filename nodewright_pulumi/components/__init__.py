"""Pulumi ComponentResources over the nodewright core (NodeClass, NodePool, Capacity, OSC).

Type tokens ``nodewright:index:<Name>``; children ``parent=self`` named ``f"{name}-..."``; outputs
declared on the class; ``register_outputs`` last. Components only adapt: what they declare is
computed by the core's stack plan (:mod:`nodewright.stack`, no ``pulumi`` import), so the CLI and
tests share it.
"""
