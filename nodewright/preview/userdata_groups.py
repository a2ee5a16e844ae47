"""Launch templates that differ only in max-pods / capacity type, shown once.

Boundary: pure over the preview document's ``userData`` entries. Karpenter renders one launch
template per max-pods group (and per capacity type), so a NodePool gets many templates whose user
data differ only in the ``max-pods`` value (``maxPods: 29``, ``--max-pods=29``, ``max-pods = 29``)
and the ``karpenter.sh/capacity-type`` label. Normalising those values to ``<max-pods>`` /
``<capacity-type>`` and grouping equal texts per NodePool gives one render per real difference,
with the varying values listed. Equality of the normalised texts is the proof that nothing else
differs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

_MAX_PODS: Final = re.compile(r"""(max-?pods["']?\s*[:=]\s*["']?)(\d+)""", re.I)
_CAPACITY: Final = re.compile(r"""(capacity-type["']?\s*[:=]\s*["']?)(on-demand|spot|reserved)""")
MAX_PODS_PLACEHOLDER: Final = "<max-pods>"
CAPACITY_PLACEHOLDER: Final = "<capacity-type>"


def normalise(text: str) -> tuple[str, tuple[int, ...], tuple[str, ...]]:
    """(text with max-pods and capacity-type values replaced, the max-pods values, the capacity types)."""
    pods = tuple(sorted({int(m.group(2)) for m in _MAX_PODS.finditer(text)}))
    capacity = tuple(sorted({m.group(2) for m in _CAPACITY.finditer(text)}))
    out = _MAX_PODS.sub(lambda m: m.group(1) + MAX_PODS_PLACEHOLDER, text)
    out = _CAPACITY.sub(lambda m: m.group(1) + CAPACITY_PLACEHOLDER, out)
    return out, pods, capacity


@dataclass(kw_only=True)
class UserDataGroupView:
    """Launch templates of one NodePool whose user data are equal once normalised."""

    node_pool: str
    content: str  # normalised when the group has several members, else the render itself
    normalised: str
    members: list[str] = field(default_factory=list)
    max_pods: set[int] = field(default_factory=set)
    capacity_types: set[str] = field(default_factory=set)

    @property
    def varying(self) -> str:
        """ "max-pods 8, 11, 29; capacity type on-demand, spot" (what differs between members)."""
        parts = []
        if len(self.max_pods) > 1:
            parts.append("max-pods " + ", ".join(str(p) for p in sorted(self.max_pods)))
        if len(self.capacity_types) > 1:
            parts.append("capacity type " + ", ".join(sorted(self.capacity_types)))
        return "; ".join(parts)


def group_user_data(entries: Sequence[Mapping[str, Any]]) -> list[UserDataGroupView]:
    """Groups in first-seen order (the document's natural order of launch templates)."""
    groups: dict[tuple[str, str], UserDataGroupView] = {}
    for e in entries:
        norm, pods, capacity = normalise(str(e["content"]))
        key = (str(e.get("nodePool", "")), norm)
        g = groups.get(key)
        if g is None:
            g = groups[key] = UserDataGroupView(node_pool=key[0], content=str(e["content"]), normalised=norm)
        g.members.append(str(e["launchTemplate"]))
        g.max_pods.update(pods)
        g.capacity_types.update(capacity)
    for g in groups.values():
        if len(g.members) > 1:
            g.content = g.normalised
            # A value every member shares is shown as itself, not as a placeholder.
            if len(g.capacity_types) == 1:
                g.content = g.content.replace(CAPACITY_PLACEHOLDER, next(iter(g.capacity_types)))
            if len(g.max_pods) == 1:
                g.content = g.content.replace(MAX_PODS_PLACEHOLDER, str(next(iter(g.max_pods))))
    return list(groups.values())
