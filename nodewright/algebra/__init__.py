"""The algebra everything else rests on: exact quantities, resource lists, node requirements, taints.

Boundary: pure values and set operations; imports nothing of nodewright but ``errors`` and
``labels``. Submodules are imported explicitly (``from nodewright.algebra.quantity import ...``).
"""
