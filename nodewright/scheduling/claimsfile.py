"""The claims file (``kind: NodeClaimPlan``): the reviewed capacity fleet mode launches. One owner.

``nodewright plan --write PATH`` writes it (:func:`claims_document` + :func:`dump_claims`), the
stack plan reads it back (:func:`load_claims`); the format is specified in docs/cli.md ("Claims
file"). Each entry is one NodeClaim of the ``plan -o json`` document plus ``nodePoolHash`` (the
pool's hash at plan time, computed by the caller: hashing is :mod:`nodewright.drift`'s, a layer
above this one). ``load_claims`` reports every problem, one line each.

Boundary: format only; no hashing, no scheduling, no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from nodewright import atomicfile, reader
from nodewright.api.documents import load_documents
from nodewright.errors import Collector, InputError
from nodewright.scheduling.plandoc import NodeClaimDict, PlanDocument

CLAIMS_API_VERSION: Final = "nodewright.dev/v1alpha1"
CLAIMS_KIND: Final = "NodeClaimPlan"
GENERATED_BY: Final = "nodewright plan"
REQUIRED_LAUNCH_KEYS: Final = ("instanceType", "zone", "capacityType")


STRATEGIES: Final = ("karpenter", "cost")  # ``plan --strategy``; absent from a file: karpenter


def claims_document(
    plan_doc: PlanDocument, *, catalog: str, hashes: Mapping[str, str], strategy: str = "karpenter"
) -> dict[str, Any]:
    """The claims file of a ``plan`` document: its NodeClaims, each with its pool's hash if known,
    and the strategy that planned them (``metadata.strategy``)."""
    claims: list[NodeClaimDict] = []
    for c in plan_doc.node_claims:
        item = c.as_dict()
        if c.node_pool in hashes:
            item["nodePoolHash"] = hashes[c.node_pool]
        claims.append(item)
    return {
        "apiVersion": CLAIMS_API_VERSION,
        "kind": CLAIMS_KIND,
        "metadata": {"generatedBy": GENERATED_BY, "catalog": catalog, "strategy": strategy},
        "nodeClaims": claims,
    }


def dump_claims(document: Mapping[str, Any]) -> str:
    """The YAML text of a claims document (key order kept, as written to Git)."""
    return reader.dump_yaml(dict(document))  # libyaml's emitter: a 20,000-claim file in seconds


def write_claims(path: str | Path, document: Mapping[str, Any]) -> None:
    """Write the claims file whole or not at all (:mod:`nodewright.atomicfile`); a failure is one
    located :class:`~nodewright.atomicfile.WriteError` and leaves the previous file intact."""
    atomicfile.write_text(path, dump_claims(document))


def load_claims(path: Path, *, strategy: str | None = None) -> list[dict[str, Any]]:
    """The ``nodeClaims`` of a claims file, validated (name, nodePool, launch.{instanceType,zone,capacityType}).

    ``strategy``: the stack's ``planStrategy``; the file's ``metadata.strategy`` (absent:
    ``karpenter``) must equal it, so a reviewed plan is never silently of the other kind."""
    if not path.is_file():
        raise InputError(
            "fleet mode needs the reviewed claims file; run `nodewright plan ... --write` and commit it",
            file=str(path),
        )
    docs = load_documents([path])
    c = Collector(str(path))
    claims: list[dict[str, Any]] = []
    for d in docs:
        if d.kind != CLAIMS_KIND:
            c.add(d.path or "kind", f"expected kind {CLAIMS_KIND} ({CLAIMS_API_VERSION}), got {d.kind!r}")
            continue
        meta = d.body.get("metadata")
        planned = str((meta if isinstance(meta, Mapping) else {}).get("strategy") or "karpenter")
        if strategy is not None and planned != strategy:
            c.add(
                d.at("metadata.strategy"),
                f"planned with strategy {planned!r} but config nodewright:planStrategy is {strategy!r}; "
                f"re-run `nodewright plan --strategy {strategy} ... --write {path.name}`",
            )
        for i, raw in enumerate(d.body.get("nodeClaims") or []):
            where = d.at(f"nodeClaims[{i}]")
            if not isinstance(raw, Mapping):
                c.add(where, "must be a mapping")
                continue
            launch_raw = raw.get("launch")
            launch: Mapping[str, Any] = launch_raw if isinstance(launch_raw, Mapping) else {}
            for k, v in (("name", raw.get("name")), ("nodePool", raw.get("nodePool"))):
                if not v:
                    c.add(f"{where}.{k}", "required")
            for k in REQUIRED_LAUNCH_KEYS:
                if not launch.get(k):
                    c.add(f"{where}.launch.{k}", "required")
            claims.append(dict(raw))
    c.raise_if_any()
    return claims
