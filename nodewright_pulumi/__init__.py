"""nodewright's Pulumi adapter: the program, its components and the CrossGuard pack entry.

A repository using nodewright (``nodewright init DIR`` scaffolds one) keeps only a two-line
``__main__.py`` calling :func:`run_program` and a ``policies/__main__.py`` calling
:func:`serve_policy_pack`; the code lives here, installed with the ``nodewright`` distribution.
The core (:mod:`nodewright`) never imports this package; this package imports the core.
"""

from __future__ import annotations

import runpy


def run_program() -> None:
    """Run the Pulumi program (:mod:`nodewright_pulumi.program`) in the current Pulumi runtime.

    The working directory is the project directory (the Pulumi CLI and ``nodewright preview`` both
    set it): stack-relative paths in ``nodewright:files`` resolve there."""
    runpy.run_module("nodewright_pulumi.program", run_name="__main__", alter_sys=False)


def serve_policy_pack() -> None:
    """Build the nodewright CrossGuard pack (:mod:`nodewright_pulumi.policies`); constructing it starts
    the analyzer's gRPC server and blocks until the engine is done."""
    runpy.run_module("nodewright_pulumi.policies", run_name="__main__", alter_sys=False)


__all__ = ["run_program", "serve_policy_pack"]
