"""The nodewright CrossGuard policy pack (built from nodewright.policy).

``pulumi preview --policy-pack policies [--policy-pack-config policies/config.example.json]``.
Constructing ``PolicyPack`` starts the analyzer's gRPC server and blocks, so this file only builds
it; the policies themselves are pure functions in :mod:`nodewright.policy`, wrapped by
:mod:`nodewright.preview.pack` (the same code ``nodewright preview`` runs in-process).
"""

from pulumi_policy import EnforcementLevel, PolicyPack

from nodewright.policy import PACK_NAME
from nodewright.preview.pack import build_policies

PolicyPack(
    name=PACK_NAME,
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=build_policies(),
)
