"""Renderer specifics, the 16 KB switch, reconcile diffs, the result Secret and the CLI."""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml
from click.testing import CliRunner

from nodewright.api.documents import documents_from_text
from nodewright.cli.render_osc import command
from nodewright.errors import RenderError
from nodewright.osc import (
    InitOptions,
    LoadedOSC,
    load_osc_documents,
    node_plan,
    reconcile_changes,
    render_osc,
    render_plan,
    result_secret,
)
from nodewright.osc.nodeplan import NodePlan, PlannedFile
from nodewright.osc.render_ignition import data_url

DATA = Path(__file__).resolve().parents[1] / "data" / "osc"
HEAD = """\
apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
metadata: {name: t}
"""
SECRET_VALUE = "s3cr3t-value-never-logged"


def _loaded(spec: str, extra: str = "") -> LoadedOSC:
    [loaded] = load_osc_documents(documents_from_text(HEAD + spec + extra, file="t.yaml"))
    return loaded


def _big(purpose: str = "provision", *, with_agent_config: bool = False) -> LoadedOSC:
    data = "".join(f"line {i:05d} of a large configuration file\n" for i in range(500))
    files = [
        {
            "path": "/etc/big.conf",
            "permissions": 0o644,
            "content": {"inline": {"encoding": "", "data": data}},
        },
        {"path": "/etc/token", "content": {"inline": {"encoding": "", "data": "<<BOOTSTRAP_TOKEN>>"}}},
        {"path": "/etc/secret", "content": {"secretRef": {"name": "s", "dataKey": "k"}}},
    ]
    if with_agent_config:
        cfg = (
            "apiServer:\n  server: https://api.from.config\n  caBundle: "
            + base64.b64encode(b"CA").decode()
            + "\n"
        )
        files.append(
            {
                "path": "/var/lib/gardener-node-agent/config.yaml",
                "content": {"inline": {"encoding": "", "data": cfg}},
            }
        )
    spec = {"spec": {"type": "ubuntu", "purpose": purpose, "files": files}}
    secret = f"---\napiVersion: v1\nkind: Secret\nmetadata: {{name: s}}\nstringData: {{k: {SECRET_VALUE}}}\n"
    return _loaded(yaml.safe_dump(spec), secret)


def test_ignition_data_urls_modes_overwrite_and_dropins() -> None:
    assert data_url(b"a b+c", clear=True) == "data:,a%20b%2Bc"
    assert data_url(b"<<BOOTSTRAP_TOKEN>>", clear=True) == "data:,%3C%3CBOOTSTRAP_TOKEN%3E%3E"
    assert data_url(b"\x00\xff", clear=False) == "data:;base64,AP8="
    loaded = _loaded(
        """\
spec:
  type: flatcar
  purpose: provision
  files: [{path: /etc/x, permissions: 0755, content: {inline: {encoding: "", data: "a b"}}}]
  units:
  - {name: k.service, dropIns: [{name: 1.conf, content: "[Service]\\n"}]}
  - {name: n.service, content: "[Unit]\\nDescription=n\\n[Service]\\nExecStart=/bin/true\\n"}
"""
    )
    cfg = json.loads(render_osc(loaded, "ignition").content)
    assert cfg["ignition"] == {"version": "3.3.0"}
    assert cfg["storage"]["files"] == [
        {"path": "/etc/x", "overwrite": True, "mode": 493, "contents": {"source": "data:,a%20b"}}
    ]
    k, n = cfg["systemd"]["units"]
    assert k == {
        "name": "k.service",
        "enabled": True,
        "dropins": [{"name": "1.conf", "contents": "[Service]\n"}],
    }
    assert "enabled" not in n  # no [Install]: enabling would only draw an ignition-validate warning


def test_ignition_rejects_setuid_modes() -> None:
    p = NodePlan(
        name="t",
        namespace=None,
        purpose="provision",
        files=(PlannedFile(path="/x", data=b"", mode=0o4755, clear=True),),
        units=(),
    )
    with pytest.raises(RenderError, match="setuid"):
        render_plan(p, "ignition")


def test_cloudinit_permissions_are_quoted_octal_strings() -> None:
    loaded = _loaded(
        'spec: {type: u, purpose: provision, files: [{path: /a, permissions: 0640, content: {inline: {encoding: "", data: x}}}]}\n'
    )
    text = render_osc(loaded, "cloud-init").content
    assert text.startswith("#cloud-config\n")
    assert "permissions: '0640'" in text
    doc = yaml.safe_load(text)
    assert doc["write_files"][0] == {"path": "/a", "permissions": "0640", "content": "x"}


def test_small_result_is_not_switched_and_default_mode_is_0600() -> None:
    loaded = _loaded(
        'spec: {type: u, purpose: provision, files: [{path: /a, content: {inline: {encoding: "", data: x}}}]}\n'
    )
    result = render_osc(loaded, "bash")
    assert not result.init_pattern and result.full_config is None
    assert "nw_write '/a' 0600 1" in result.content


@pytest.mark.parametrize("fmt", ["cloud-init", "bash", "ignition"])
def test_large_provision_switches_to_init_pattern_with_warning(
    fmt: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="nodewright")
    loaded = _big()
    init = InitOptions(api_server="https://api.example.com/", ca_bundle=b"-----BEGIN CERTIFICATE-----\n")
    result = render_osc(loaded, fmt, init=init)  # type: ignore[arg-type]
    assert result.init_pattern and result.bytes <= 16384
    url = "https://api.example.com/api/v1/namespaces/kube-system/secrets/osc-result-t"
    assert (quote(url, safe="") if fmt == "ignition" else url) in result.content
    assert SECRET_VALUE not in repr(result)
    assert result.full_config is not None and len(result.full_config.encode()) > 16384
    assert "switched to the Gardener init-script pattern" in caplog.text
    assert SECRET_VALUE not in caplog.text and "c3Ny" not in caplog.text
    assert "<<BOOTSTRAP_TOKEN>>" in result.full_config
    placeholder = "%3C%3CBOOTSTRAP_TOKEN%3E%3E" if fmt == "ignition" else "<<BOOTSTRAP_TOKEN>>"
    assert placeholder in result.content
    assert result.as_dict()["fullConfig"] == result.full_config
    assert result.as_dict()["resultSecret"] == {
        "namespace": "kube-system",
        "name": "osc-result-t",
        "key": "full_config",
    }


def test_init_pattern_takes_api_server_from_node_agent_config_or_fails_clearly() -> None:
    result = render_osc(_big(with_agent_config=True), "bash")
    assert "https://api.from.config/api/v1/" in result.content
    assert "base64 -d << 'NODEWRIGHT_EOF' | nw_write '/var/lib/nodewright-osc/ca.crt'" in result.content
    with pytest.raises(RenderError, match="pass --api-server"):
        render_osc(_big(), "bash")


def test_reconcile_purpose_is_never_switched() -> None:
    result = render_osc(_big("reconcile"), "bash")
    assert not result.init_pattern and result.bytes > 16384
    assert "provision-osc-applied" not in result.content


def test_result_secret_gardener_contract() -> None:
    small = render_osc(_loaded("spec: {type: u, purpose: provision}\n"), "cloud-init")
    secret = result_secret(small)
    assert secret["metadata"] == {"name": "osc-result-t", "namespace": "kube-system"}
    assert set(secret["data"]) == {"cloud_config"}
    assert base64.b64decode(secret["data"]["cloud_config"]).decode() == small.content
    big = render_osc(_big(), "cloud-init", init=InitOptions(api_server="https://a", namespace="nodes"))
    secret = result_secret(big, labels={"b": "2", "a": "1"})
    assert secret["metadata"]["namespace"] == "nodes" and list(secret["metadata"]["labels"]) == ["a", "b"]
    assert base64.b64decode(secret["data"]["full_config"]).decode() == big.full_config
    assert base64.b64decode(secret["data"]["cloud_config"]).decode() == big.content


RECONCILE_OLD = """\
spec:
  type: ubuntu
  purpose: reconcile
  criConfig: {name: containerd, containerd: {sandboxImage: pause:1}}
  units:
  - {name: a.service, content: "[Unit]\\n", filePaths: [/etc/a]}
  - {name: b.service, content: "[Unit]\\n"}
  - {name: c.service, content: "[Unit]\\n"}
  - {name: os.service, dropIns: [{name: 1.conf, content: x}]}
  - {name: gone.service, content: "[Unit]\\n"}
  files:
  - {path: /etc/a, content: {inline: {encoding: "", data: one}}}
  - {path: /etc/keep, content: {inline: {encoding: "", data: same}}}
  - {path: /etc/old, content: {inline: {encoding: "", data: x}}}
"""


def test_reconcile_changes_follow_node_agent() -> None:
    old = _loaded(RECONCILE_OLD)
    new_text = (
        RECONCILE_OLD.replace("data: one", "data: two")
        .replace(
            '  - {name: c.service, content: "[Unit]\\n"}',
            '  - {name: c.service, content: "[Unit]\\n", enable: false}',
        )
        .replace(
            '  - {name: gone.service, content: "[Unit]\\n"}\n',
            '  - {name: new.service, content: "[Unit]\\n"}\n',
        )
        .replace("  - {name: os.service, dropIns: [{name: 1.conf, content: x}]}\n", "")
        .replace('  - {path: /etc/old, content: {inline: {encoding: "", data: x}}}\n', "")
        .replace("pause:1", "pause:2")
    )
    changes = reconcile_changes(old, _loaded(new_text))
    assert changes.files_changed == ("/etc/a",)
    assert changes.files_removed == ("/etc/old",)
    assert changes.units_to_restart == ("a.service", "containerd.service", "new.service", "os.service")
    assert changes.units_to_stop == ("c.service",)
    assert changes.units_removed == ("gone.service",)
    assert changes.summary()["restartContainerd"] is True
    fresh = reconcile_changes(None, old)
    assert fresh.units_to_restart == (
        "a.service",
        "b.service",
        "c.service",
        "containerd.service",
        "gone.service",
        "os.service",
    )
    same = reconcile_changes(old, old)
    assert same.unit_commands == () and same.files_changed == () and not same.restart_containerd


def test_registries_render_exact_node_agent_hosts_toml() -> None:
    [loaded] = load_osc_documents(
        documents_from_text((DATA / "reconcile-registries.yaml").read_text(), file="r.yaml")
    )
    files = {f.path: f.text for f in node_plan(loaded).files}
    assert files["/etc/containerd/certs.d/docker.io/hosts.toml"] == (
        '# managed by gardener-node-agent\nserver = "https://registry.hub.docker.com"\n\n'
        '[host."https://10.10.10.100:8080"]\n  capabilities = ["pull","resolve"]\n\n'
        '[host."https://10.10.10.200:8080"]\n  capabilities = ["pull","resolve"]\n\n'
    )
    assert files["/etc/containerd/certs.d/registry.k8s.io/hosts.toml"] == (
        '# managed by gardener-node-agent\nserver = "https://registry.k8s.io"\n\n'
        '[host."https://10.10.10.101:8080"]\n  capabilities = ["pull"]\n  ca = ["/var/certs/ca.crt"]\n'
        "  override_path = true\n\n"
    )


def test_cli_raw_json_and_errors(tmp_path: Path) -> None:
    src = DATA / "node-init.yaml"
    runner = CliRunner()
    raw = runner.invoke(command, ["-f", str(src), "--format", "bash"])
    assert raw.exit_code == 0, raw.output
    assert raw.output == (DATA / "node-init.bash").read_text()
    js = runner.invoke(command, ["-f", str(src), "--format", "ignition", "-o", "json"])
    assert js.exit_code == 0, js.output
    data = json.loads(js.output)
    assert data["format"] == "ignition" and data["content"] == (DATA / "node-init.ign").read_text()
    assert data["bytes"] == len(data["content"].encode()) and data["initPattern"] is False
    assert data["placeholders"] == ["<<BOOTSTRAP_TOKEN>>", "<<MACHINE_NAME>>"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(HEAD + "spec: {type: u, purpose: nope}\n")
    err = runner.invoke(command, ["-f", str(bad), "--format", "bash"])
    assert err.exit_code == 1
    assert f"error: {bad}:spec.purpose: must be 'provision' or 'reconcile', got 'nope'" in err.output
    assert "Traceback" not in err.output
    usage = runner.invoke(command, ["-f", str(src), "--format", "mime"])
    assert usage.exit_code == 2


def test_cli_previous_adds_reconcile_changes(tmp_path: Path) -> None:
    old = tmp_path / "old.yaml"
    old.write_text(HEAD + RECONCILE_OLD)
    new = tmp_path / "new.yaml"
    new.write_text(HEAD + RECONCILE_OLD.replace("data: one", "data: two"))
    out = CliRunner().invoke(
        command, ["-f", str(new), "--format", "bash", "-o", "json", "--previous", str(old)]
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["changes"]["unitsToRestart"] == ["a.service"]
