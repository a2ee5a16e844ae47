"""Drift: Karpenter-compatible NodePool/EC2NodeClass hashes and drift detection.

Public API:

* :func:`nodepool_hash` / :func:`hash_nodepool` / :func:`template_hash` - ``NodePool.Hash()`` v3,
  the ``karpenter.sh/nodepool-hash`` value, bit for bit (hashstructure v2.0.2 port);
* :func:`nodeclass_hash` - ``EC2NodeClass.Hash()`` as the release passed in computes it (v5 with
  the cluster CA bundle, v4 without);
* :func:`hash_documents` - ``nodewright hash`` over files;
* :func:`drift_impact` - which NodeClaims of a cluster state Karpenter would mark ``Drifted``
  once the given NodePools (and EC2NodeClasses) are applied, with a per-NodePool replacement count;
* :mod:`nodewright.drift.hashstructure` - the generic hashing algorithm and Go type model.

Boundary: pure functions over raw mappings / the api models / a cluster state; no I/O except the
file readers in :mod:`nodewright.drift.inputs`.
"""

from __future__ import annotations

from nodewright.drift.detect import drift_impact, drift_impact_files
from nodewright.drift.inputs import hash_documents
from nodewright.drift.nodeclasshash import nodeclass_hash
from nodewright.drift.nodepoolhash import (
    NodePoolHash,
    hash_nodepool,
    nodepool_hash,
    template_hash,
)
from nodewright.drift.report import DriftedNodeClaim, DriftReport, PoolImpact
from nodewright.goduration import DurationError, format_duration, parse_duration

__all__ = [
    "DriftReport",
    "DriftedNodeClaim",
    "DurationError",
    "NodePoolHash",
    "PoolImpact",
    "drift_impact",
    "drift_impact_files",
    "format_duration",
    "hash_documents",
    "hash_nodepool",
    "nodeclass_hash",
    "nodepool_hash",
    "parse_duration",
    "template_hash",
]
