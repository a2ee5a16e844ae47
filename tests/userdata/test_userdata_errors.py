"""Bad user data gets a precise error (and never shows the CA bundle): one test per case."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from nodewright.errors import RenderError
from nodewright.userdata import ClusterInfo, KubeletConfig, Options, UserDataError, render, resolve_options
from nodewright.userdata.dispatch import MAX_BYTES, WARN_BYTES

CA = "Y2EtYnVuZGxlCg=="
INFO = ClusterInfo(name="c", endpoint="https://c", ca_bundle=CA, cidr="10.100.0.0/16", dns=("10.0.100.10",))


def opts(family: str, user_data: str | None, **kw: object) -> Options:
    return resolve_options(
        family=family,
        info=INFO,
        labels={"karpenter.sh/nodepool": "default"},
        capacity_type="on-demand",
        kubelet=KubeletConfig(max_pods=110),
        user_data=user_data,
        **kw,  # type: ignore[arg-type]
    )


def test_user_data_error_is_a_render_error() -> None:
    assert issubclass(UserDataError, RenderError)


def test_al2_broken_mime() -> None:
    bad = 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="BOUNDARY"\n--BOUNDARY\n\necho\n--BOUNDARY--'
    with pytest.raises(UserDataError, match='malformed MIME header: missing colon: "--BOUNDARY"') as info:
        render("AL2", opts("AL2", bad))
    assert info.value.path == "spec.userData"


def test_al2023_broken_mime() -> None:
    bad = (
        'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n--B\nContent-Type: a/b\n\nx\n--B--\n'
    )
    with pytest.raises(
        UserDataError, match='parsing custom UserData, malformed MIME header: missing colon: "--B"'
    ):
        render("AL2023", opts("AL2023", bad))


def test_al2023_mime_bad_part_header() -> None:
    bad = 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\nnot a header\n\nx\n--B--\n'
    with pytest.raises(
        UserDataError, match='parsing content, malformed MIME header: missing colon: "not a header"'
    ):
        render("AL2023", opts("AL2023", bad))


def test_bottlerocket_invalid_toml_names_the_line() -> None:
    with pytest.raises(UserDataError, match=r"not valid TOML: line 3, column \d+") as info:
        render("Bottlerocket", opts("Bottlerocket", "[settings.kubernetes]\nmax-pods = 10\n./not-toml.sh\n"))
    assert "invalid UserData" in info.value.message


def test_bottlerocket_wrong_type_names_the_setting() -> None:
    with pytest.raises(
        UserDataError, match=r"settings.kubernetes.max-pods must be a TOML integer, not a string"
    ):
        render("Bottlerocket", opts("Bottlerocket", '[settings.kubernetes]\nmax-pods = "110"\n'))
    with pytest.raises(
        UserDataError, match=r"image-gc-high-threshold-percent must be a TOML string.*quoted string"
    ):
        render(
            "Bottlerocket",
            opts("Bottlerocket", "[settings.kubernetes]\nimage-gc-high-threshold-percent = 85\n"),
        )


def test_nodeconfig_that_is_not_yaml_bare() -> None:
    bad = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet: [unclosed\n"
    with pytest.raises(
        UserDataError, match=r"user data: the NodeConfig is not valid YAML at line \d+, column \d+"
    ):
        render("AL2023", opts("AL2023", bad))


def test_nodeconfig_that_is_not_yaml_in_a_mime_part() -> None:
    bad = (
        'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\n'
        "Content-Type: application/node.eks.aws\n\nspec: {kubelet: [\n--B--\n"
    )
    with pytest.raises(UserDataError, match=r"MIME part 1: the NodeConfig is not valid YAML"):
        render("AL2023", opts("AL2023", bad))


def test_nodeconfig_part_that_is_a_list() -> None:
    bad = 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: application/node.eks.aws\n\n- a\n- b\n--B--\n'
    with pytest.raises(UserDataError, match="is a YAML list, not a mapping"):
        render("AL2023", opts("AL2023", bad))


@pytest.mark.parametrize("family", ["AL2", "AL2023", "Bottlerocket", "Custom", "Windows2022"])
def test_user_data_file_over_16k(family: str) -> None:
    big = "#!/bin/bash\n" + "# padding\n" * 1700
    assert len(big) > MAX_BYTES
    with pytest.raises(
        UserDataError, match=r"spec.userData is \d+ bytes, over EC2's 16384-byte user-data limit"
    ):
        render(family, opts(family, big))


def test_rendered_over_16k() -> None:
    near = "#!/bin/bash\n" + "x" * (MAX_BYTES - 200) + "\n"
    with pytest.raises(
        UserDataError, match=r"the rendered user data is \d+ bytes, \d+ over EC2's 16384-byte limit"
    ):
        render("AL2", opts("AL2", near))


def test_warning_at_90_percent(caplog: pytest.LogCaptureFixture) -> None:
    user = "#!/bin/bash\n" + "x" * (WARN_BYTES - 500) + "\n"
    with caplog.at_level(logging.WARNING, logger="nodewright"):
        text = render("AL2", opts("AL2", user)).text
    assert WARN_BYTES <= len(text) <= MAX_BYTES
    assert any("of EC2's 16384-byte limit" in r.getMessage() for r in caplog.records)


def test_al2023_needs_the_cluster_cidr() -> None:
    o = dataclasses.replace(opts("AL2023", None), cluster_cidr=None)
    with pytest.raises(UserDataError, match="resolving cluster CIDR") as info:
        render("AL2023", o)
    assert info.value.path == "clusterCIDR"


def test_al2023_ca_bundle_must_be_base64_and_is_not_printed() -> None:
    o = dataclasses.replace(opts("AL2023", None), ca_bundle="not base64 at all!")
    with pytest.raises(UserDataError, match="decoding CABundle") as info:
        render("AL2023", o)
    assert "not base64 at all!" not in str(info.value)


def test_errors_never_show_the_ca_bundle() -> None:
    bad = f'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n{CA}\n'
    with pytest.raises(UserDataError) as info:
        render("AL2", opts("AL2", bad))
    assert CA not in str(info.value)
    assert "[secret]" in str(info.value)


def test_max_pods_must_be_known() -> None:
    with pytest.raises(UserDataError, match="maxPods is unknown"):
        resolve_options(family="AL2", info=INFO, labels={}, capacity_type="spot")


def test_bad_grace_period() -> None:
    o = dataclasses.replace(
        opts("AL2", None),
        kubelet=KubeletConfig(max_pods=1, eviction_soft_grace_period={"memory.available": "1 minute"}),
    )
    with pytest.raises(UserDataError, match='unknown unit " minute" in duration "1 minute"') as info:
        render("AL2", o)
    assert info.value.path == "spec.kubelet.evictionSoftGracePeriod.memory.available"


@pytest.mark.parametrize("family", ["AL2", "AL2023"])
def test_a_body_line_equal_to_the_boundary_is_refused(family: str) -> None:
    user = "#!/bin/bash\necho start\n--//\necho end\n"
    with pytest.raises(UserDataError, match="has a line starting with --//"):
        render(family, opts(family, user))
