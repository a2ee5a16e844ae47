"""Port of aws/karpenter-provider-aws v1.14.1 ``pkg/apis/v1/ec2nodeclass_validation_cel_test.go``
(Describe "CEL/Validation") against the shipped EC2NodeClass CRD. ``create_ok`` stands for
``env.Client.Create``. Objects are written as Go serializes them (``omitempty``: an empty map or
string is left out; quantities as ``resource.Quantity`` prints them, e.g. 500G). The update
scenarios of Context("Role Immutability") are in test_upstream_updates.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from crd_helpers import create_ok
from crd_helpers import ec2nodeclass as nc

FAMILIES = ["AL2", "AL2023", "Bottlerocket", "Windows2019", "Windows2022", "Windows2025", "Custom"]
ALIASED = [f for f in FAMILIES if f != "Custom"]


# -- role / instance profile -------------------------------------------------------------------


def test_should_succeed_if_just_specifying_role() -> None:
    """It("should succeed if just specifying role")"""
    assert create_ok(nc())


def test_should_succeed_if_just_specifying_instance_profile() -> None:
    """It("should succeed if just specifying instance profile")"""
    assert create_ok(nc(role=None, instanceProfile="test-instance-profile"))


def test_should_fail_if_specifying_both_instance_profile_and_role() -> None:
    """It("should fail if specifying both instance profile and role")"""
    assert not create_ok(nc(instanceProfile="test-instance-profile"))


def test_should_fail_if_not_specifying_one_of_instance_profile_and_role() -> None:
    """It("should fail if not specifying one of instance profile and role") and
    Context("Role Immutability") It("should fail if role is not defined")"""
    assert not create_ok(nc(role=None))


def test_should_succeed_if_user_data_is_empty() -> None:
    """Context("UserData") It("should succeed if user data is empty")"""
    assert create_ok(nc(userData=None))


# -- Context("AMIFamily") ----------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_should_succeed_with_valid_families(family: str) -> None:
    """DescribeTable("should succeed with valid families")"""
    assert create_ok(nc(amiSelectorTerms=[{"id": "ami-0123456789abcdef"}], amiFamily=family))


def test_should_fail_with_the_ubuntu_family() -> None:
    """It("should fail with the ubuntu family")"""
    assert not create_ok(nc(amiSelectorTerms=[{"id": "ami-0123456789abcdef"}], amiFamily="Ubuntu"))


@pytest.mark.parametrize("family", ALIASED)
def test_should_succeed_when_the_ami_family_matches_the_alias(family: str) -> None:
    """DescribeTable("should succeed when the amiFamily matches amiSelectorTerms[].alias")"""
    assert create_ok(nc(amiSelectorTerms=[{"alias": f"{family.lower()}@latest"}], amiFamily=family))


@pytest.mark.parametrize("family", ALIASED)
def test_should_succeed_when_the_ami_family_is_custom_with_an_alias(family: str) -> None:
    """DescribeTable("should succeed when the amiFamily is custom with amiSelectorTerms[].alias")"""
    assert create_ok(nc(amiSelectorTerms=[{"alias": f"{family.lower()}@latest"}], amiFamily="Custom"))


@pytest.mark.parametrize(("family", "alias_family"), [(a, b) for a in ALIASED for b in ALIASED if a != b])
def test_should_fail_when_the_ami_family_does_not_match_the_alias(family: str, alias_family: str) -> None:
    """DescribeTable("should fail when then amiFamily does not match amiSelectorTerms[].alias")"""
    assert not create_ok(nc(amiSelectorTerms=[{"alias": f"{alias_family.lower()}@latest"}], amiFamily=family))


def test_should_fail_when_neither_ami_family_nor_an_alias_are_specified() -> None:
    """It("should fail when neither amiFamily nor an alias are specified")"""
    assert not create_ok(nc(amiSelectorTerms=[{"id": "ami-01234567890abcdef"}], amiFamily=None))


# -- Context("Tags") ---------------------------------------------------------------------------


def test_should_succeed_when_tags_are_empty() -> None:
    """It("should succeed when tags are empty") (omitempty: no tags field)"""
    assert create_ok(nc(tags=None))


def test_should_succeed_if_tags_are_not_in_restricted_tag_keys() -> None:
    """It("should succeed if tags aren't in restricted tag keys")"""
    tags = {
        "karpenter.sh/custom-key": "value",
        "karpenter.sh/managed": "true",
        "kubernetes.io/role/key": "value",
    }
    assert create_ok(nc(tags=tags))


@pytest.mark.parametrize(
    "key",
    [
        "karpenter.sh/nodepool",
        "kubernetes.io/cluster/test",
        "eks:eks-cluster-name",
        "karpenter.k8s.aws/ec2nodeclass",
        "karpenter.sh/nodeclaim",
    ],
)
def test_should_fail_if_tags_contain_a_restricted_domain_key(key: str) -> None:
    """It("should fail if tags contain a restricted domain key")"""
    assert not create_ok(nc(tags={key: "value"}))


# -- Context("SubnetSelectorTerms") / Context("SecurityGroupSelectorTerms") --------------------

TAGS_FAIL = [
    ("no values", [{}]),
    ("no tag map values (omitempty)", [{}]),
    ("a tag map value that is empty", [{"tags": {"test": ""}}]),
    ("a tag map key that is empty", [{"tags": {"": "testvalue"}}]),
    (
        "the last selector is invalid",
        [
            {"tags": {"test": "testvalue"}},
            {"tags": {"test2": "testvalue2"}},
            {"tags": {"test3": "testvalue3"}},
            {"tags": {"": "testvalue4"}},
        ],
    ),
]


@pytest.mark.parametrize(
    "terms", [[{"tags": {"test": "testvalue"}}], [{"id": "subnet-12345749"}]], ids=["tags", "id"]
)
def test_should_succeed_with_a_valid_subnet_selector(terms: list[dict[str, Any]]) -> None:
    """It("should succeed with a valid subnet selector on tags" / "on id")"""
    assert create_ok(nc(subnetSelectorTerms=terms))


@pytest.mark.parametrize(
    ("name", "terms"),
    [
        ("set to nil", None),
        ("no subnet selector terms exist", []),
        *TAGS_FAIL,
        ("specifying id with tags", [{"id": "subnet-12345749", "tags": {"test": "testvalue"}}]),
    ],
)
def test_should_fail_for_bad_subnet_selector_terms(name: str, terms: Any) -> None:
    """It("should fail when subnet selector terms is set to nil" / "when no subnet selector terms
    exist" / "when a subnet selector term has no values" / ... / "when specifying id with tags")"""
    assert not create_ok(nc(subnetSelectorTerms=terms)), name


@pytest.mark.parametrize(
    "terms",
    [[{"tags": {"test": "testvalue"}}], [{"id": "sg-12345749"}], [{"name": "testname"}]],
    ids=["tags", "id", "name"],
)
def test_should_succeed_with_a_valid_security_group_selector(terms: list[dict[str, Any]]) -> None:
    """It("should succeed with a valid security group selector on tags" / "on id" / "on name")"""
    assert create_ok(nc(securityGroupSelectorTerms=terms))


@pytest.mark.parametrize(
    ("name", "terms"),
    [
        ("set to nil", None),
        ("no security group selector terms exist", []),
        *TAGS_FAIL,
        ("specifying id with tags", [{"id": "sg-12345749", "tags": {"test": "testvalue"}}]),
        ("specifying id with name", [{"id": "sg-12345749", "name": "my-security-group"}]),
        ("specifying name with tags", [{"name": "my-security-group", "tags": {"test": "testvalue"}}]),
    ],
)
def test_should_fail_for_bad_security_group_selector_terms(name: str, terms: Any) -> None:
    """It("should fail when security group selector terms ...") entries of Context("SecurityGroupSelectorTerms")"""
    assert not create_ok(nc(securityGroupSelectorTerms=terms)), name


# -- Context("CapacityReservationSelectorTerms") -----------------------------------------------


@pytest.mark.parametrize(
    ("name", "terms"),
    [
        ("on tags", [{"tags": {"test": "testvalue"}}]),
        ("on id", [{"id": "cr-12345749"}]),
        ("a valid ownerID", [{"ownerID": "012345678901", "tags": {"test": "testvalue"}}]),
        ("set to nil", None),
        ("instanceMatchCriteria open", [{"instanceMatchCriteria": "open"}]),
        ("instanceMatchCriteria targeted", [{"instanceMatchCriteria": "targeted"}]),
        (
            "instanceMatchCriteria with tags",
            [{"instanceMatchCriteria": "open", "tags": {"test": "testvalue"}}],
        ),
        (
            "instanceMatchCriteria with ownerID and tags",
            [{"instanceMatchCriteria": "targeted", "ownerID": "012345678901", "tags": {"test": "testvalue"}}],
        ),
    ],
)
def test_should_succeed_with_capacity_reservation_selector_terms(name: str, terms: Any) -> None:
    """The "should succeed" Its of Context("CapacityReservationSelectorTerms")"""
    assert create_ok(nc(capacityReservationSelectorTerms=terms)), name


@pytest.mark.parametrize(
    ("name", "terms"),
    [
        ("a malformed id", [{"id": "r-12345749"}]),
        *TAGS_FAIL,
        ("id with tags in a single term", [{"id": "cr-12345749", "tags": {"test": "testvalue"}}]),
        ("id with ownerID in a single term", [{"ownerID": "012345678901", "id": "cr-12345749"}]),
        ("a malformed ownerID", [{"ownerID": "01234567890", "tags": {"test": "testvalue"}}]),
        ("ownerID by itself", [{"ownerID": "012345678901"}]),
        ("an invalid instanceMatchCriteria", [{"instanceMatchCriteria": "invalid"}]),
        ("id with instanceMatchCriteria", [{"id": "cr-12345749", "instanceMatchCriteria": "open"}]),
    ],
)
def test_should_fail_with_bad_capacity_reservation_selector_terms(name: str, terms: Any) -> None:
    """The "should fail" Its of Context("CapacityReservationSelectorTerms")"""
    assert not create_ok(nc(capacityReservationSelectorTerms=terms)), name


# -- Context("AMISelectorTerms") ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "terms"),
    [
        ("alias", [{"alias": "al2023@latest"}]),
        ("tags", [{"tags": {"test": "testvalue"}}]),
        ("id", [{"id": "ami-12345749"}]),
        ("name", [{"name": "testname"}]),
        ("name and owner", [{"name": "testname", "owner": "testowner"}]),
        ("owner with tags", [{"owner": "testowner", "tags": {"test": "testvalue"}}]),
    ],
)
def test_should_succeed_with_a_valid_ami_selector(name: str, terms: list[dict[str, Any]]) -> None:
    """It("should succeed with a valid ami selector on alias/tags/id/name/name and owner"),
    It("should succeed when an ami selector term has an owner key with tags")"""
    assert create_ok(nc(amiSelectorTerms=terms)), name


@pytest.mark.parametrize(("name", "terms"), TAGS_FAIL)
def test_should_fail_for_bad_ami_selector_terms(name: str, terms: list[dict[str, Any]]) -> None:
    """It("should fail when a ami selector term has no values" / ... / "when the last ami selector is invalid")"""
    assert not create_ok(nc(amiSelectorTerms=terms)), name


@pytest.mark.parametrize(
    "extra",
    [
        {"alias": "al2023@latest"},
        {"tags": {"test": "testvalue"}},
        {"name": "my-custom-ami"},
        {"owner": "123456789"},
    ],
    ids=["alias", "tags", "name", "owner"],
)
def test_should_fail_when_specifying_id_with_other_fields(extra: dict[str, Any]) -> None:
    """DescribeTable("should fail when specifying id with other fields")"""
    assert not create_ok(nc(amiSelectorTerms=[{"id": "ami-1234749", **extra}]))


@pytest.mark.parametrize(
    "extra",
    [
        {"id": "ami-1234749"},
        {"tags": {"test": "testvalue"}},
        {"name": "my-custom-ami"},
        {"owner": "123456789"},
    ],
    ids=["id", "tags", "name", "owner"],
)
def test_should_fail_when_specifying_alias_with_other_fields(extra: dict[str, Any]) -> None:
    """DescribeTable("should fail when specifying alias with other fields")"""
    assert not create_ok(nc(amiSelectorTerms=[{"alias": "al2023@latest", **extra}]))


def test_should_fail_when_specifying_alias_with_other_terms() -> None:
    """It("should fail when specifying alias with other terms")"""
    assert not create_ok(nc(amiSelectorTerms=[{"alias": "al2023@latest"}, {"id": "ami-1234749"}]))


@pytest.mark.parametrize(
    ("alias", "family"),
    [
        ("al2@latest", "AL2"),
        ("al2@v20240625", "AL2"),
        ("al2023@latest", "AL2023"),
        ("al2023@v20240625", "AL2023"),
        ("bottlerocket@latest", "Bottlerocket"),
        ("bottlerocket@1.10.0", "Bottlerocket"),
        ("windows2019@latest", "Windows2019"),
        ("windows2022@latest", "Windows2022"),
        ("windows2025@latest", "Windows2025"),
    ],
)
def test_should_succeed_for_valid_aliases(alias: str, family: str) -> None:
    """DescribeTable("should succeed for valid aliases")"""
    assert create_ok(nc(amiFamily=family, amiSelectorTerms=[{"alias": alias}]))


@pytest.mark.parametrize("alias", ["@latest", "al2023", "al2023@", "al2023-latest"])
def test_should_fail_for_incorrectly_formatted_aliases(alias: str) -> None:
    """DescribeTable("should fail for incorrectly formatted aliases"): missing family, missing version, invalid separator"""
    assert not create_ok(nc(amiSelectorTerms=[{"alias": alias}]))


def test_should_fail_for_an_alias_with_an_invalid_family() -> None:
    """It("should fail for an alias with an invalid family")"""
    assert not create_ok(nc(amiSelectorTerms=[{"alias": "ubuntu@latest"}]))


@pytest.mark.parametrize("alias", ["windows2019@v1.0.0", "windows2022@v1.0.0", "windows2025@v1.0.0"])
def test_should_fail_when_specifying_non_latest_versions_with_windows_aliases(alias: str) -> None:
    """DescribeTable("should fail when specifying non-latest versions with Windows aliases")"""
    assert not create_ok(nc(amiSelectorTerms=[{"alias": alias}]))
