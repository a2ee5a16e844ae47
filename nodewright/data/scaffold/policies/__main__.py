"""The CrossGuard policy pack: nodewright's own (:mod:`nodewright_pulumi.policies`).

``pulumi preview --policy-pack policies --policy-pack-config policies/config.json``; `nodewright
init` writes this file. The rules and their config are documented in nodewright's docs/pulumi.md.
"""

from nodewright_pulumi import serve_policy_pack

serve_policy_pack()
