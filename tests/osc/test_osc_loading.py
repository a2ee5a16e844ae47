"""Loading OSCs: shapes, every problem at once with file and JSON path, Secrets, no value leaks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nodewright.api.documents import documents_from_text
from nodewright.errors import InputError, InputErrors, NodewrightError
from nodewright.osc import load_osc, load_osc_documents, node_plan

HEAD = """\
apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
metadata: {name: t, namespace: ns}
"""


def _load(text: str, file: str = "osc.yaml") -> list[str]:
    try:
        load_osc_documents(documents_from_text(text, file=file))
    except NodewrightError as exc:
        return exc.lines()
    return []


def test_yaml_octal_permissions_and_camel_case_fields(tmp_path: Path) -> None:
    p = tmp_path / "o.yaml"
    p.write_text(
        HEAD
        + """\
spec:
  type: ubuntu
  purpose: provision
  criConfig: {name: containerd, cgroupDriver: systemd}
  units:
  - {name: a.service, command: restart, enable: false, filePaths: [/etc/a], dropIns: [{name: 1.conf, content: x}]}
  files:
  - {path: /etc/a, permissions: 0644, content: {inline: {encoding: "", data: hi}, transmitUnencoded: true}}
"""
    )
    loaded = load_osc([p])
    f = loaded.osc.spec.files[0]
    assert f.permissions == 0o644
    assert f.content.transmit_unencoded is True
    u = loaded.osc.spec.units[0]
    assert (u.enable, u.command, u.file_paths, u.drop_ins[0].name) == (
        False,
        "restart",
        ("/etc/a",),
        "1.conf",
    )
    assert loaded.osc.spec.cri_config is not None and loaded.osc.spec.cri_config.cgroup_driver == "systemd"


def test_every_schema_problem_is_reported_with_its_path() -> None:
    lines = _load(
        HEAD
        + """\
spec:
  type: ubuntu
  purpose: provison
  units:
  - {name: a.service, commnd: start}
  files:
  - {path: /a, permissions: "0644", content: {inline: {encoding: b65, data: x}}}
  - {path: /b, permissions: 99999, content: {inline: {encoding: b64, data: "!!"}}}
"""
    )
    assert lines == [
        "osc.yaml:spec.purpose: must be 'provision' or 'reconcile', got 'provison'",
        "osc.yaml:spec.units[0].commnd: unknown field; check the spelling against the OperatingSystemConfig API "
        "(extensions.gardener.cloud/v1alpha1, docs/osc.md)",
        "osc.yaml:spec.files[0].permissions: permissions must be an integer (YAML 0644 or JSON 420), got str "
        "'0644'; write it unquoted",
        "osc.yaml:spec.files[0].content.inline.encoding: must be '' or 'b64', got 'b65'",
        "osc.yaml:spec.files[1].permissions: permissions 99999 is outside 0..4095 (0o7777)",
        "osc.yaml:spec.files[1].content.inline.data: data is not valid base64 although encoding is 'b64'",
    ]


def test_cross_field_rules_all_at_once() -> None:
    lines = _load(
        HEAD
        + """\
spec:
  type: ubuntu
  purpose: provision
  criConfig:
    name: containerd
    containerd:
      sandboxImage: pause
      registries:
      - {upstream: "Bad_Host", hosts: [{url: "ftp://x"}]}
      - {upstream: docker.io, server: "nope"}
      - {upstream: docker.io}
      plugins: [{op: remove, path: [a], values: {x: 1}}]
  units:
  - {name: foo, filePaths: [/missing], dropIns: [{name: 10-x, content: y}]}
  files:
  - {path: rel, content: {inline: {encoding: "", data: x}}}
  - {path: /dup, content: {inline: {encoding: "", data: x}}}
  - {path: /dup, content: {inline: {encoding: "", data: y}, secretRef: {name: s, dataKey: k}}}
  - {path: /none, content: {}}
  - {path: /sec, content: {secretRef: {name: absent, dataKey: k}}}
"""
    )
    joined = "\n".join(lines)
    for expected in (
        "spec.files[0].path: path 'rel' is not absolute",
        "spec.files[2].path: duplicate path '/dup'",
        "spec.files[2].content: either 'secretRef', 'inline' or 'imageRef' must be provided, not multiple",
        "spec.files[3].content: one of 'inline', 'secretRef' or 'imageRef' must be provided",
        "spec.units[0].name: 'foo' is not a systemd unit name",
        "spec.units[0].dropIns[0].name: drop-in '10-x' must be a file name ending in '.conf'",
        "spec.units[0].filePaths[0]: 'filePath' '/missing' requires a matching 'path' in 'spec.files'",
        "spec.criConfig.containerd: containerd config is not allowed for OperatingSystemConfig with purpose "
        "'provision'",
        "registries[0].upstream: 'Bad_Host' must be a host[:port] or '_default'",
        "registries[0].hosts[0].url: must be an http:// or https:// URL",
        "registries[1].server: must be an http:// or https:// URL",
        "registries[2].upstream: duplicate upstream (also registries[1])",
        "plugins[0].values: values are not allowed with op 'remove'",
        "spec.files[4].content.secretRef.name: Secret 'absent' not found",
    ):
        assert expected in joined, f"{expected!r} not in:\n{joined}"
    assert all(line.startswith("osc.yaml:") for line in lines)


def test_secret_set_resolves_and_values_never_appear_in_errors() -> None:
    text = (
        HEAD
        + """\
spec:
  type: ubuntu
  purpose: provision
  files:
  - {path: /a, content: {secretRef: {name: creds, dataKey: token}}}
  - {path: /b, content: {secretRef: {name: creds, dataKey: nope}}}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: ns}
data: {token: c3VwZXJzZWNyZXQtdmFsdWU=}
stringData: {other: also-secret-value}
"""
    )
    lines = _load(text, file="f.yaml")
    assert lines == [
        "f.yaml:documents[0].spec.files[1].content.secretRef.dataKey: Secret 'creds' has no key 'nope' "
        "(keys: 'other', 'token')"
    ]
    assert "supersecret" not in "".join(lines) and "also-secret" not in "".join(lines)
    good = text.replace("dataKey: nope", "dataKey: other")
    [loaded] = load_osc_documents(documents_from_text(good, file="f.yaml"))
    planned = node_plan(loaded)
    assert [f.data for f in planned.files] == [b"supersecret-value", b"also-secret-value"]
    assert planned.secret_paths() == ["/a", "/b"]
    assert "supersecret" not in repr(loaded.secrets)


def test_json_list_and_wrong_api_version(tmp_path: Path) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "extensions.gardener.cloud/v1beta1", "kind": "OperatingSystemConfig", "spec": {}},
        ],
    }
    p = tmp_path / "l.json"
    p.write_text(json.dumps(body))
    with pytest.raises(InputError) as err:
        load_osc([p])
    assert str(err.value) == (
        f"{p}:items[0].apiVersion: must be 'extensions.gardener.cloud/v1alpha1', got "
        "'extensions.gardener.cloud/v1beta1'"
    )


def test_one_osc_required_and_name_selects(tmp_path: Path) -> None:
    one = HEAD + "spec: {type: ubuntu, purpose: provision}\n"
    p = tmp_path / "two.yaml"
    p.write_text(one + "---\n" + one.replace("name: t,", "name: u,"))
    with pytest.raises(
        InputError, match="2 OperatingSystemConfigs found \\('t', 'u'\\); pick one with --name"
    ):
        load_osc([p])
    assert load_osc([p], name="u").osc.name == "u"
    with pytest.raises(InputError, match="no OperatingSystemConfig named 'v'"):
        load_osc([p], name="v")
    empty = tmp_path / "empty.yaml"
    empty.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    with pytest.raises(InputError, match="no OperatingSystemConfig"):
        load_osc([empty])


def test_image_ref_cannot_be_rendered_and_host_name_filters(caplog: pytest.LogCaptureFixture) -> None:
    text = (
        HEAD
        + """\
spec:
  type: ubuntu
  purpose: provision
  files:
  - {path: /img, content: {imageRef: {image: "r/i:1", filePathInImage: /x}}}
"""
    )
    [loaded] = load_osc_documents(documents_from_text(text, file="i.yaml"))
    with pytest.raises(InputError, match="imageRef files are extracted from an image"):
        node_plan(loaded)
    text2 = text.replace(
        '{path: /img, content: {imageRef: {image: "r/i:1", filePathInImage: /x}}}',
        "{path: /h, hostName: node-1, content: {inline: {encoding: '', data: x}}}",
    )
    [loaded2] = load_osc_documents(documents_from_text(text2, file="i.yaml"))
    assert node_plan(loaded2).files == ()
    assert "only for host 'node-1'" in caplog.text
    assert [f.path for f in node_plan(loaded2, host_name="node-1").files] == ["/h"]


def test_status_extension_units_merge_like_node_agent() -> None:
    text = (
        HEAD
        + """\
spec:
  type: ubuntu
  purpose: reconcile
  units:
  - {name: kubelet.service, enable: true, dropIns: [{name: 1.conf, content: a}]}
status:
  extensionUnits:
  - {name: kubelet.service, command: restart, dropIns: [{name: 2.conf, content: b}]}
  - {name: ntp.service, content: "[Unit]\\n"}
  conditions: []
"""
    )
    [loaded] = load_osc_documents(documents_from_text(text, file="s.yaml"))
    units = loaded.osc.all_units()
    assert [u.name for u in units] == ["kubelet.service", "ntp.service"]
    assert units[0].command == "restart" and units[0].enable is True
    assert [d.name for d in units[0].drop_ins] == ["1.conf", "2.conf"]


def test_many_problems_raise_input_errors_type() -> None:
    with pytest.raises(InputErrors):
        load_osc_documents(
            documents_from_text(HEAD + "spec: {type: '', purpose: x, bogus: 1}\n", file="m.yaml")
        )
