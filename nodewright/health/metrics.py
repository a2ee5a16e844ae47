"""NodePool health as Prometheus text exposition (prometheus-client), for a textfile collector or Pushgateway.

Boundary: a :class:`~nodewright.health.derive.HealthReport` -> text. Every metric is a gauge in
nodewright's own namespace (``nodewright_``, so it never collides with the series Karpenter itself
exports), snake_case labels, no ``_count``/``_total`` suffix (``promtool check metrics`` clean).
Which Karpenter metric each one mirrors is in docs/health.md:

* ``nodewright_nodepool_status_condition{kind="NodePool",name,type="NodeRegistrationHealthy",status,reason}``:
  1 for the current condition;
* ``nodewright_nodepool_registration_results{nodepool,result="success"|"failure"}``: the tracker buffer;
* ``nodewright_nodepool_verified{nodepool,nodeclass}``: 1 when the current NodePool/NodeClass pair has
  launched an initialized node (the Degraded NodePool RFC, kubernetes-sigs/karpenter pull request #1885), else 0;
* ``nodewright_nodepool_degraded{nodepool,reason}``: 1 when the RFC's Degraded reading is True;
* ``nodewright_nodepool_pending_pods{nodepool,nodepool_verified}``: pending pods waiting on the pool;
* ``nodewright_pods_provisioning_unbound_time_seconds{name,namespace,nodepool,nodepool_verified}``:
  seconds each pending pod has waited (since PodScheduled=False), with the RFC's verified flag so
  waits on never-verified pools can be filtered out.
"""

from __future__ import annotations

from nodewright.health.report import CONDITION_TYPE, HealthReport


def render_prometheus(report: HealthReport) -> str:
    """The report in the Prometheus text format (version 0.0.4)."""
    # imported here: only ``-o prometheus`` pays for prometheus-client (and its http.server)
    from prometheus_client import CollectorRegistry, Gauge, generate_latest

    reg = CollectorRegistry(auto_describe=True)
    cond = Gauge(
        "nodewright_nodepool_status_condition",
        "The current status condition of a Karpenter object (1 per object and condition).",
        ["kind", "name", "type", "status", "reason"],
        registry=reg,
    )
    results = Gauge(
        "nodewright_nodepool_registration_results",
        "Launch/registration results in the NodePool's health buffer (last 4).",
        ["nodepool", "result"],
        registry=reg,
    )
    verified = Gauge(
        "nodewright_nodepool_verified",
        "1 when the NodePool/NodeClass pair has launched an initialized node, else 0.",
        ["nodepool", "nodeclass"],
        registry=reg,
    )
    degraded = Gauge(
        "nodewright_nodepool_degraded",
        "1 when the NodePool reads as Degraded (unhealthy, or never verified and failing).",
        ["nodepool", "reason"],
        registry=reg,
    )
    pending = Gauge(
        "nodewright_nodepool_pending_pods",
        "Pending (provisionable) pods that would go to this NodePool.",
        ["nodepool", "nodepool_verified"],
        registry=reg,
    )
    unbound = Gauge(
        "nodewright_pods_provisioning_unbound_time_seconds",
        "The time a pending pod has been waiting to bind, by whether its NodePool was ever verified.",
        ["name", "namespace", "nodepool", "nodepool_verified"],
        registry=reg,
    )
    for p in report.pools:
        v = "true" if p.verified else "false"
        cond.labels("NodePool", p.name, CONDITION_TYPE, p.condition.status, p.condition.reason).set(1)
        results.labels(p.name, "success").set(sum(1 for b in p.buffer if b))
        results.labels(p.name, "failure").set(sum(1 for b in p.buffer if not b))
        verified.labels(p.name, p.nodeclass).set(1 if p.verified else 0)
        degraded.labels(p.name, p.degraded.reason).set(1 if p.degraded.status == "True" else 0)
        pending.labels(p.name, v).set(len(p.pending_pods))
        for key in p.pending_pods:
            namespace, _, name = key.partition("/")
            since = report.pending_since.get(key)
            waited = max(0.0, (report.now - since).total_seconds()) if since is not None else 0.0
            unbound.labels(name, namespace, p.name, v).set(waited)
    return generate_latest(reg).decode("utf-8")
