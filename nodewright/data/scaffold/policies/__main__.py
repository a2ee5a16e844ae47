"""This repository's CrossGuard pack: the packaged one (:mod:`nodewright_pulumi.policies`).

``pulumi preview --policy-pack policies --policy-pack-config policies/config.json``; the same two
lines `nodewright init` writes into a user's repository.
"""

from nodewright_pulumi import serve_policy_pack

serve_policy_pack()
