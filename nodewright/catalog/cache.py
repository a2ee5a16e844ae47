"""On-disk and in-process caching of the ``aws:<region>`` catalog.

The slow part of ``aws:<region>`` is asking EC2 (or moto: ~8 s for us-east-1). Its result, the
family-independent :class:`~nodewright.catalog.aws.BaseType` list, is stored as JSON under
``$XDG_CACHE_HOME/nodewright/`` (default ``~/.cache/nodewright/``) in a file named by a hash of
every input (region, source, moto or price-table version, format version). Writes are atomic
(temp file + rename); an unreadable, truncated or foreign file is ignored and rewritten. Real-AWS
entries expire after :data:`AWS_TTL_SECONDS`; embedded ones only change with their inputs.
``NODEWRIGHT_NO_CACHE=1`` disables the disk cache.

Boundary: serialisation and files only; no EC2 calls, no math.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Final

from nodewright import atomicfile
from nodewright.catalog.aws import BaseType
from nodewright.catalog.model import Ec2Facts, Offering, RequirementSpec

FORMAT_VERSION: Final = 3
AWS_TTL_SECONDS: Final = 6 * 3600
NO_CACHE_ENV: Final = "NODEWRIGHT_NO_CACHE"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "nodewright"


def cache_enabled() -> bool:
    return os.environ.get(NO_CACHE_ENV, "").strip() not in ("1", "true", "yes")


def cache_path(region: str, inputs: dict[str, Any]) -> Path:
    digest = hashlib.sha256(
        json.dumps({"format": FORMAT_VERSION, **inputs}, sort_keys=True).encode()
    ).hexdigest()
    return cache_dir() / f"catalog-{region}-{digest[:16]}.json"


class _Interner:
    """Assigns each distinct row an index: specs and offerings repeat across types."""

    def __init__(self) -> None:
        self.rows: list[Any] = []
        self._index: dict[str, int] = {}

    def __call__(self, row: list[Any]) -> int:
        key = json.dumps(row)
        if key not in self._index:
            self._index[key] = len(self.rows)
            self.rows.append(row)
        return self._index[key]


def _encode(types: list[BaseType]) -> dict[str, Any]:
    specs, offers = _Interner(), _Interner()
    rows = []
    for b in types:
        f = b.facts
        rows.append(
            [
                b.name,
                [
                    f.vcpus,
                    f.memory_mib,
                    f.arm64,
                    f.max_interfaces,
                    f.ipv4_per_interface,
                    f.instance_storage_gb,
                    [list(c) for c in f.network_cards],
                    f.ena_supported,
                ],
                dict(f.extended),
                [specs([s.key, s.operator, list(s.values)]) for s in b.specs],
                [
                    offers([o.zone, o.capacity_type, o.price, o.available, o.zone_id, o.unpriced])
                    for o in b.offerings
                ],
            ]
        )
    return {"specs": specs.rows, "offerings": offers.rows, "types": rows}


def _decode(data: dict[str, Any]) -> list[BaseType]:
    specs = [RequirementSpec(str(k), str(op), tuple(str(v) for v in vals)) for k, op, vals in data["specs"]]
    offers = [
        Offering(
            zone=str(z),
            capacity_type=str(ct),
            price=float(p),
            available=bool(a),
            zone_id=zid,
            unpriced=bool(u),
        )
        for z, ct, p, a, zid, u in data["offerings"]
    ]
    out = []
    for name, f, extended, spec_ix, offer_ix in data["types"]:
        facts = Ec2Facts(
            vcpus=int(f[0]),
            memory_mib=int(f[1]),
            arm64=bool(f[2]),
            max_interfaces=int(f[3]),
            ipv4_per_interface=int(f[4]),
            instance_storage_gb=None if f[5] is None else int(f[5]),
            extended={str(k): int(v) for k, v in extended.items()},
            network_cards=tuple((int(i), int(m)) for i, m in f[6]),
            ena_supported=bool(f[7]),
        )
        out.append(
            BaseType(
                name=str(name),
                facts=facts,
                specs=tuple(specs[i] for i in spec_ix),
                offerings=tuple(offers[i] for i in offer_ix),
            )
        )
    return out


def read(path: Path, *, ttl_seconds: float | None) -> list[BaseType] | None:
    """The cached types, or None when missing, expired or unreadable (never raises)."""
    if not cache_enabled():
        return None
    try:
        if ttl_seconds is not None and time.time() - path.stat().st_mtime > ttl_seconds:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT_VERSION:
            return None
        return _decode(data)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def write(path: Path, types: list[BaseType], *, meta: dict[str, Any]) -> None:
    """Atomically write the cache file; failures (read-only home, full disk) are ignored."""
    if not cache_enabled():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"format": FORMAT_VERSION, "meta": meta, **_encode(types)}, separators=(",", ":"))
        atomicfile.write_text(path, body)
    except (OSError, atomicfile.WriteError):
        pass
