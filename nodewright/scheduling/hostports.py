"""Host port bookkeeping (Karpenter ``pkg/scheduling/hostportusage.go``).

A port is ``(ip, port, protocol)``; an empty host IP means ``0.0.0.0``. Two ports conflict when
protocol and port match and the IPs are equal or either is unspecified. A pod never conflicts with
itself (usage is keyed by the pod's ``namespace/name``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from nodewright.api.core import Pod

_UNSPECIFIED: Final = ("0.0.0.0", "::")

CONFLICT: Final = "pod hostport conflicts with existing hostport configuration"


@dataclass(frozen=True, slots=True)
class HostPort:
    ip: str
    port: int
    protocol: str

    def matches(self, other: HostPort) -> bool:
        if self.protocol != other.protocol or self.port != other.port:
            return False
        if self.ip == other.ip:
            return True
        return self.ip in _UNSPECIFIED or other.ip in _UNSPECIFIED


def host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """Every host port the pod's containers (init containers included) expose."""
    out: list[HostPort] = []
    for c in (*pod.spec.containers, *pod.spec.init_containers):
        for p in c.ports:
            if not p.host_port:
                continue
            out.append(HostPort(ip=p.host_ip or "0.0.0.0", port=p.host_port, protocol=p.protocol or "TCP"))
    return tuple(out)


class HostPortUsage:
    """The host ports in use on one (simulated) node, by pod."""

    __slots__ = ("_by_pod",)

    def __init__(self, by_pod: dict[str, tuple[HostPort, ...]] | None = None) -> None:
        self._by_pod: dict[str, tuple[HostPort, ...]] = dict(by_pod) if by_pod else {}

    def copy(self) -> HostPortUsage:
        return HostPortUsage(self._by_pod)

    def __bool__(self) -> bool:
        return bool(self._by_pod)

    def add(self, pod_key: str, ports: Iterable[HostPort]) -> None:
        ports = tuple(ports)
        if ports:
            self._by_pod[pod_key] = ports

    def conflicts(self, pod_key: str, ports: tuple[HostPort, ...]) -> str | None:
        """Karpenter's error text when a port is taken by another pod, else None."""
        if not ports or not self._by_pod:
            return None
        for owner, used in self._by_pod.items():
            if owner == pod_key:
                continue
            for u in used:
                for p in ports:
                    if p.matches(u):
                        return CONFLICT
        return None
