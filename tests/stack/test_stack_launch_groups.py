"""Fleet-mode launch-template groups split as Karpenter's resolver splits them (aws/karpenter-provider-aws
v1.14.1 ``pkg/providers/amifamily/resolver.go`` ``Resolve``: one template per max-pods, EFA count and
reservation id; ``launchtemplate.go``: the tenancy and enclave of the launch), through
``nodewright.stack.launchtemplates.render_groups``."""

from __future__ import annotations

from pathlib import Path

from nodewright.api.documents import Document
from nodewright.stack.build import lt_key
from nodewright.stack.launchtemplates import ClaimLaunch, render_groups

CLUSTER = {
    "clusterName": "demo",
    "clusterEndpoint": "https://demo",
    "caBundle": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUMvakNDQWVhZ0F3SUJBZ0lCQURBTkJna3Foa2lHOXcwQkFRc0ZBREFWTVJNd0VRWURWUVFERXdwcmRXSmwKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=",
    "clusterCIDR": "10.100.0.0/16",
    "clusterDNS": "10.100.0.10",
}
NODECLASS = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "hpc"},
    "spec": {
        "role": "r",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"id": "subnet-1"}],
        "securityGroupSelectorTerms": [{"id": "sg-1"}],
    },
}
NODEPOOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "hpc"},
    "spec": {
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "hpc"},
                "requirements": [],
            }
        }
    },
}


def _catalog(tmp_path: Path) -> str:
    path = tmp_path / "catalog.yaml"
    path.write_text(
        "apiVersion: nodewright.dev/v1alpha1\nkind: InstanceTypeCatalog\ninstanceTypes:\n"
        "- name: p5.48xlarge\n  capacity: {cpu: '192', memory: 2048Gi, pods: '100', vpc.amazonaws.com/efa: '4'}\n"
        "  offerings: [{zone: us-east-1a, capacityType: on-demand, price: 98.3, available: true}]\n"
        "- name: m5.large\n  capacity: {cpu: '2', memory: 8Gi, pods: '29'}\n"
        "  offerings: [{zone: us-east-1a, capacityType: on-demand, price: 0.096, available: true}]\n"
    )
    return str(path)


def _groups(tmp_path: Path, claims: list[ClaimLaunch]) -> list:  # type: ignore[type-arg]
    return render_groups(
        Document(file="nc.yaml", path="", body=NODECLASS),
        Document(file="np.yaml", path="", body=NODEPOOL),
        CLUSTER,
        cluster_file="Pulumi.test.yaml",
        claims=claims,
        catalog=_catalog(tmp_path),
        security_group_ids=("sg-1",),
    )


def test_efa_claims_get_one_efa_interface_per_adapter(tmp_path: Path) -> None:
    efa = ClaimLaunch.of_claim(
        {
            "launch": {"instanceType": "p5.48xlarge", "capacityType": "on-demand"},
            "requests": {"cpu": "1", "vpc.amazonaws.com/efa": "1"},
        }
    )
    plain = ClaimLaunch(instance_type="p5.48xlarge", capacity_type="on-demand")
    groups = _groups(tmp_path, [efa, plain])
    assert [(g.efa_count, g.key_suffix()) for g in groups] == [(0, ""), (4, "-efa4")]
    spec = groups[1].spec
    assert [(n.network_card_index, n.device_index, n.interface_type) for n in spec.network_interfaces] == [
        (0, 0, "efa"),
        (1, 1, "efa"),
        (2, 1, "efa"),
        (3, 1, "efa"),
    ]
    assert lt_key("hpc", max_pods=100, capacity_type="on-demand", fixed=False, suffix="-efa4") == (
        "hpc-on-demand-pods100-efa4"
    )
    assert groups[1].claims == (efa,)


def test_reserved_claims_get_one_template_per_reservation(tmp_path: Path) -> None:
    def reserved(cr: str, kind: str = "default") -> ClaimLaunch:
        return ClaimLaunch.of_claim(
            {
                "launch": {"instanceType": "m5.large", "capacityType": "reserved"},
                "labels": {
                    "karpenter.k8s.aws/capacity-reservation-id": cr,
                    "karpenter.k8s.aws/capacity-reservation-type": kind,
                },
            }
        )

    groups = _groups(tmp_path, [reserved("cr-1"), reserved("cr-2", "capacity-block")])
    assert [(g.reservation_id, g.spec.capacity_reservation_id, g.spec.market_type) for g in groups] == [
        ("cr-1", "cr-1", None),
        ("cr-2", "cr-2", "capacity-block"),
    ]
    assert all(g.spec.capacity_reservation_preference == "capacity-reservations-only" for g in groups)


def test_dedicated_tenancy_and_enclave(tmp_path: Path) -> None:
    claim = ClaimLaunch.of_claim(
        {
            "launch": {"instanceType": "m5.large", "capacityType": "on-demand"},
            "labels": {"karpenter.k8s.aws/instance-tenancy": "dedicated"},
            "requests": {"eks.amazonaws.com/nip-slots": "1"},
        }
    )
    (group,) = _groups(tmp_path, [claim])
    assert group.key_suffix() == "-dedicated-enclave"
    assert (group.spec.tenancy, group.spec.enclave_enabled) == ("dedicated", True)
