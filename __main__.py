"""The Pulumi program: nodewright's own (:mod:`nodewright_pulumi.program`), installed with nodewright.

`nodewright init` writes this file; stack config (``stacks/Pulumi.<stack>.yaml``, keys
``nodewright:<key>``) is documented in nodewright's docs/pulumi.md.
"""

from nodewright_pulumi import run_program

run_program()
