"""The ``nodewright preview`` document, typed: :class:`PreviewDocument` and its one :meth:`~PreviewDocument.as_dict`.

The top-level fields are attributes; what lies under them (resource inputs as the program
registered them, policy violations, the drift and cost sections, already ``as_dict()``-ed by their
owners) stays JSON-ready mappings. :meth:`PreviewDocument.as_dict` is the ``-o json`` document, key
order included: ``project, stack, resources, policyViolations, outputs, userData, summary,
findings[, notes][, drift][, cost][, karpenter][, changes]``. :func:`read_base` reads a base
branch's ``-o json`` (``--base``); :meth:`PreviewDocument.with_changes` adds the resource changes
against it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from nodewright import reader
from nodewright.errors import InputError


@dataclass(frozen=True, kw_only=True)
class PreviewDocument:
    """What the offline preview found; ``None``/empty optional sections are left out of :meth:`as_dict`."""

    project: str
    stack: str
    resources: Sequence[Mapping[str, Any]]
    policy_violations: Sequence[Mapping[str, Any]]
    outputs: Mapping[str, Any]
    user_data: Sequence[Mapping[str, str]]
    summary: Mapping[str, Any]
    findings: Sequence[Mapping[str, Any]]
    notes: Sequence[str] = ()
    drift: Mapping[str, Any] | None = None
    cost: Mapping[str, Any] | None = None
    karpenter: Mapping[str, Any] | None = None
    changes: Sequence[Mapping[str, Any]] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The ``nodewright preview -o json`` document (a fresh top level; nested values shared)."""
        doc: dict[str, Any] = {
            "project": self.project,
            "stack": self.stack,
            "resources": self.resources,
            "policyViolations": self.policy_violations,
            "outputs": self.outputs,
            "userData": self.user_data,
            "summary": self.summary,
            "findings": self.findings,
        }
        if self.notes:
            doc["notes"] = list(self.notes)
        if self.drift is not None:
            doc["drift"] = self.drift
        if self.cost is not None:
            doc["cost"] = self.cost
        if self.karpenter is not None:
            doc["karpenter"] = self.karpenter
        if self.changes is not None:
            doc["changes"] = self.changes
        return doc

    def with_changes(self, base: Mapping[str, Any]) -> PreviewDocument:
        """This document with ``changes``: every resource created, updated, replaced or deleted
        since ``base`` (a base branch's ``-o json``)."""
        from nodewright.preview.diff import diff_documents

        changes = [c.as_dict() for c in diff_documents(base, self.as_dict()) if c.op != "same"]
        return replace(self, changes=changes)


def read_base(path: Path) -> dict[str, Any]:
    """A base branch's ``nodewright preview -o json`` (``--base``), checked to be one."""
    if not path.is_file():
        raise InputError(
            "no such base preview file; produce it with `nodewright preview -o json`", file=str(path)
        )
    data = reader.load_json(reader.read_text(path), file=str(path))
    if not isinstance(data, dict) or "resources" not in data:
        raise InputError("not a `nodewright preview -o json` document (no resources)", file=str(path))
    return data
