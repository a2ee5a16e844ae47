"""The EC2 API calls behind ``aws:<region>`` (:mod:`.aws` turns their answers into instance types).

``DescribeInstanceTypes`` (hvm, x86_64/arm64, paginated), ``DescribeAvailabilityZones``,
``DescribeInstanceTypeOfferings`` (LocationType availability-zone) and ``DescribeSpotPriceHistory``
through boto3; without AWS credentials in the environment the same calls are answered in-process
by moto with fake credentials set only on that session (the embedded default).
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from nodewright.errors import CatalogError, InputError

SOURCE_ENV: Final = "NODEWRIGHT_CATALOG_SOURCE"  # "aws" or "embedded" overrides detection
ARCHITECTURES: Final = {"x86_64": "amd64", "arm64": "arm64"}


def has_aws_credentials(environ: Mapping[str, str] | None = None) -> bool:
    """True when the environment names AWS credentials (keys, profile, container or web identity).

    Never probes the instance metadata service; set ``NODEWRIGHT_CATALOG_SOURCE=aws`` to force real
    AWS (e.g. on an instance with a role) or ``embedded`` to force the moto-backed default.
    """
    env = os.environ if environ is None else environ
    forced = env.get(SOURCE_ENV, "").strip().lower()
    if forced in ("aws", "embedded"):
        return forced == "aws"
    keys = (
        "AWS_ACCESS_KEY_ID",
        "AWS_PROFILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    )
    if any(env.get(k) for k in keys):
        return True
    creds = env.get("AWS_SHARED_CREDENTIALS_FILE") or str(Path.home() / ".aws" / "credentials")
    return Path(creds).is_file()


# -- EC2 calls ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Ec2Answers:
    """What the four EC2 calls answered, reduced to what the catalog needs."""

    region: str
    instance_types: list[dict[str, Any]]
    zones: dict[str, str]  # available zone name -> zone id
    offered: dict[str, set[str]]  # instance type -> zones
    spot: dict[str, dict[str, float]]  # instance type -> zone -> latest spot price


def _paginate(client: Any, op: str, key: str, **kwargs: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for page in client.get_paginator(op).paginate(**kwargs):
        out.extend(page.get(key, []))
    return out


def _call_ec2(client: Any, region: str, *, trust_spot: bool) -> Ec2Answers:
    # Karpenter filters on hvm and on architecture x86_64/arm64 server-side; moto's architecture
    # filter drops the types that also list i386 (t2.nano, c1.medium...), so that one runs here.
    infos = [
        info
        for info in _paginate(
            client,
            "describe_instance_types",
            "InstanceTypes",
            Filters=[{"Name": "supported-virtualization-type", "Values": ["hvm"]}],
        )
        if set((info.get("ProcessorInfo") or {}).get("SupportedArchitectures") or ()) & set(ARCHITECTURES)
    ]
    zones = {
        z["ZoneName"]: z.get("ZoneId", "")
        for z in client.describe_availability_zones()["AvailabilityZones"]
        if z.get("State", "available") == "available"
        and z.get("ZoneType", "availability-zone") == "availability-zone"
    }
    offered: dict[str, set[str]] = {}
    for o in _paginate(
        client, "describe_instance_type_offerings", "InstanceTypeOfferings", LocationType="availability-zone"
    ):
        offered.setdefault(o["InstanceType"], set()).add(o["Location"])
    spot: dict[str, dict[str, float]] = {}
    latest: dict[tuple[str, str], Any] = {}
    if not trust_spot:  # moto's history is a placeholder (0.00001 at 2006-01-02): don't ask
        return Ec2Answers(region=region, instance_types=infos, zones=zones, offered=offered, spot=spot)
    try:
        history = _paginate(
            client,
            "describe_spot_price_history",
            "SpotPriceHistory",
            ProductDescriptions=["Linux/UNIX", "Linux/UNIX (Amazon VPC)"],
            StartTime=dt.datetime.now(dt.UTC),
        )
    except Exception:  # spot prices are optional: Karpenter then prices spot at on-demand
        history = []
    for h in history:
        k = (h["InstanceType"], h["AvailabilityZone"])
        ts = h.get("Timestamp")
        if k not in latest or (ts is not None and ts > latest[k]):
            latest[k] = ts
            spot.setdefault(k[0], {})[k[1]] = float(h["SpotPrice"])
    return Ec2Answers(region=region, instance_types=infos, zones=zones, offered=offered, spot=spot)


def fetch(region: str, *, embedded: bool | None = None) -> tuple[Ec2Answers, str]:
    """Ask EC2 (or moto, without credentials); returns the answers and ``"aws"``/``"embedded"``."""
    import boto3
    import botocore.exceptions

    use_moto = (not has_aws_credentials()) if embedded is None else embedded
    try:
        if not use_moto:
            client = boto3.Session(region_name=region).client("ec2")
            return _call_ec2(client, region, trust_spot=True), "aws"
        from moto import mock_aws

        with mock_aws():
            session = boto3.Session(
                aws_access_key_id="nodewright-embedded",
                aws_secret_access_key="nodewright-embedded",
                region_name=region,
            )
            return _call_ec2(session.client("ec2"), region, trust_spot=False), "embedded"
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        raise CatalogError(f"cannot read the EC2 catalog of {region}: {exc}") from exc
    except (KeyError, ValueError) as exc:  # moto without data for a region
        raise CatalogError(f"no embedded EC2 data for {region} ({type(exc).__name__}: {exc})") from exc


def known_regions() -> list[str]:
    """EC2 regions botocore knows (all partitions), from its bundled endpoint data."""
    import boto3

    session = boto3.Session()
    out: set[str] = set()
    for partition in session.get_available_partitions():
        out.update(session.get_available_regions("ec2", partition_name=partition))
    return sorted(out)


def check_region(region: str) -> None:
    """Raise :class:`InputError` naming the closest region when ``region`` is not an EC2 region."""
    regions = known_regions()
    if region in regions:
        return
    close = difflib.get_close_matches(region, regions, n=1)
    hint = f'did you mean "aws:{close[0]}"? ' if close else ""
    raise InputError(f'unknown AWS region "{region}"; {hint}e.g. aws:us-east-1', file=f"aws:{region}")
