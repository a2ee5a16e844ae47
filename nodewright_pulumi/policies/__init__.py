"""The CrossGuard pack entry (``__main__``): ``python -m nodewright_pulumi.policies`` serves it.

Importing this package does not start the server; :func:`nodewright_pulumi.serve_policy_pack` does.
"""
