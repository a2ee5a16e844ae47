"""Pulumi ComponentResources over the nodewright core (NodeClass, NodePool, Capacity, OSC)."""
