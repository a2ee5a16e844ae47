"""This repository's Pulumi program: the packaged one (:mod:`nodewright_pulumi.program`).

The same two lines `nodewright init` writes into a user's repository; stack config is documented in
docs/pulumi.md.
"""

from nodewright_pulumi import run_program

run_program()
