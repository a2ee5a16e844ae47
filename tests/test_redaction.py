"""No secret ever reaches any output: every command, every format, results, warnings and errors.

The inputs under ``tests/data/secrets`` (and the stack ``tests/data/pulumi/stacks/Pulumi.secrets.yaml``)
carry a line-wrapped CA bundle (GNU base64's 76 columns), a bootstrap token, an AWS access key id,
an AWS secret access key and a private key; the detector itself is checked on each shape too.
"""

from __future__ import annotations

import base64
import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from nodewright import redact
from nodewright.cli import main
from nodewright.redact import find_credentials

DATA = Path("tests/data/secrets")
NC, NP, INFO = str(DATA / "nodeclasses.yaml"), str(DATA / "nodepools.yaml"), str(DATA / "cluster-info.yaml")
STACK = "tests/data/pulumi/stacks/Pulumi.secrets.yaml"
CATALOG = "tests/data/catalogs/fake.yaml"

CA_LINES = [
    line.strip()
    for line in (DATA / "cluster-info.yaml").read_text().splitlines()
    if line.startswith("  LS0t") or (line.startswith("  ") and len(line.strip()) == 76)
]
CA = "".join(CA_LINES)
SECRETS = {
    "bootstrap token": "q7x2mz.4f8k1p0c9d3b6a5e",
    "AWS access key id": "AKIAQWERTYUIOPASDFGH",
    "AWS secret access key": "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY1",
    "private key": "MIIEowIBAAKCAQEAzNotARealKeyButShapedLikeOneQWERTYUIOPASDFGHJKLZX",
    "CA bundle": CA,
    "secure config": "ZmFrZS1zZWN1cmUtdmFsdWUtZm9yLXRlc3Rz",
}


def _leaks(text: str) -> list[str]:
    found = [name for name, value in SECRETS.items() if value in text]
    found += [f"CA line {i}" for i, line in enumerate(CA_LINES) if line in text]
    return found


def _userdata(pool: str, fmt: str, *extra: str) -> list[str]:
    return ["render", "userdata", "-f", NC, "--nodepool", NP, "--nodepool-name", pool, "--cluster-info", INFO,
            "--catalog", CATALOG, "-o", fmt, *extra]  # fmt: skip


COMMANDS = {
    "render userdata al2023 raw": _userdata("default", "raw", "--instance-type", "default-instance-type"),
    "render userdata al2023 json": _userdata("default", "json", "--instance-type", "default-instance-type"),
    "render userdata bottlerocket raw": _userdata("gpu", "raw", "--instance-type", "default-instance-type"),
    "render userdata bottlerocket json": _userdata("gpu", "json", "--instance-type", "default-instance-type"),
    "render userdata all raw": _userdata("default", "raw", "--instance-type", "all"),
    "render userdata all json": _userdata("gpu", "json", "--instance-type", "all"),
    "preview json": ["preview", "--stack-file", STACK, "-o", "json"],
    "preview markdown": ["preview", "--stack-file", STACK, "-o", "markdown"],
    "preview table": ["preview", "--stack-file", STACK, "-o", "table"],
    "validate table": ["validate", "-f", NC, "-f", NP],
    "validate json": ["validate", "-f", NC, "-f", NP, "-o", "json"],
    "hash json": ["hash", "-f", NP, "-o", "json"],
    "catalog --nodeclass": ["catalog", "list", "--catalog", CATALOG, "--nodeclass", str(DATA / "gpu.yaml")],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_secret_in_any_output(name: str) -> None:
    result = CliRunner().invoke(main, COMMANDS[name])
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert result.exit_code in (0, 1), result.output
    assert _leaks(result.stdout + result.stderr) == []
    if name.startswith(("render", "preview json", "preview markdown")):
        assert redact.REDACTED in result.stdout


def test_preview_json_still_reports_what_the_policy_detects() -> None:
    result = CliRunner().invoke(main, COMMANDS["preview json"])
    doc = json.loads(result.stdout)
    messages = " ".join(v["message"] for v in doc["policyViolations"])
    for kind in ("bootstrap token", "AWS access key id", "AWS secret access key", "private key"):
        assert kind in messages


def test_show_secrets_is_the_only_way_to_the_clear_bytes() -> None:
    shown = CliRunner().invoke(main, [*COMMANDS["render userdata al2023 raw"], "--show-secrets"])
    assert shown.exit_code == 0 and SECRETS["bootstrap token"] in shown.stdout


def test_errors_and_warnings_are_redacted(tmp_path: Path) -> None:
    info = tmp_path / "info.yaml"
    info.write_text(
        (DATA / "cluster-info.yaml")
        .read_text()
        .replace("clusterName: demo", "clusterName: q7x2mz.4f8k1p0c9d3b6a5e\nextraKey: AKIAQWERTYUIOPASDFGH")
    )
    result = CliRunner().invoke(main, ["render", "userdata", "-f", NC, "--nodepool", NP, "--nodepool-name", "default",
                                       "--cluster-info", str(info), "--catalog", CATALOG])  # fmt: skip
    assert result.exit_code == 1 and "error: " in result.stderr and "clusterName" in result.stderr
    assert _leaks(result.stdout + result.stderr) == []


def _wrapped(data: bytes) -> str:
    return "\n".join(textwrap.wrap(base64.b64encode(data).decode(), 76))


@pytest.mark.parametrize(
    "shape",
    [
        "plain",
        "wrapped",
        "wrapped-indented",
        "json-escaped",
        "toml-field",
        "yaml-field",
        "bootstrap-flag",
    ],
)
def test_ca_bundle_is_found_in_every_shape(shape: str) -> None:
    pem = b"-----BEGIN CERTIFICATE-----\n" + b"A" * 600 + b"\n-----END CERTIFICATE-----\n"
    plain = base64.b64encode(pem).decode()
    wrapped = _wrapped(pem)
    text = {
        "plain": f"x {plain} y",
        "wrapped": f"before\n{wrapped}\nafter: 1",
        "wrapped-indented": "ca: |\n" + textwrap.indent(wrapped, "    ") + "\nnext: 1",
        "json-escaped": json.dumps({"ca": wrapped, "next": 1}),
        "toml-field": 'cluster-certificate = "' + wrapped.replace("\n", "\\n") + '"\nother = 1',
        "yaml-field": "certificateAuthority: Y2EtYnVuZGxlCg==\ncidr: 10.0.0.0/16",
        "bootstrap-flag": "--b64-cluster-ca 'Y2EtYnVuZGxlCg==' --apiserver-endpoint 'https://x'",
    }[shape]
    out = redact.redact(text)
    assert redact.REDACTED in out
    for line in wrapped.splitlines():
        assert line not in out
    assert "Y2EtYnVuZGxlCg" not in out
    # what follows the secret survives
    assert any(
        tail in out
        for tail in ("y", "after: 1", "next", "other = 1", "cidr: 10.0.0.0/16", "--apiserver-endpoint")
    )


def test_placeholders_and_ordinary_text_stay() -> None:
    text = "<<BOOTSTRAP_TOKEN>> topology.kubernetes.io/zone default-8x2kq karpenter.sh/nodepool=web"
    assert redact.redact(text) == text
    assert find_credentials(text) == []


def test_policy_and_redactor_share_the_detector() -> None:
    for name, value in SECRETS.items():
        if name in ("CA bundle", "secure config"):
            continue
        sample = f"aws_secret_access_key={value}" if name == "AWS secret access key" else value
        if name == "private key":
            sample = f"-----BEGIN RSA PRIVATE KEY-----\n{value}\n-----END RSA PRIVATE KEY-----"
        assert find_credentials(sample), name
        assert value not in redact.redact(sample), name


# -- every channel of real processes: stdout, stderr and written files, in every encoding ------------

OSC = str(DATA / "osc.yaml")
CLEAR = {
    **{k: v for k, v in SECRETS.items() if k != "secure config"},
    "password": "Sup3rS3cretPassw0rd",
    "certificate": "MIICQUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJD",
}


def _forms(value: str) -> dict[str, str]:
    """``value`` as it may appear encoded in an output: clear, JSON-escaped, percent-encoded, and
    the base64 of it at each of the three byte alignments (the part that depends on it alone)."""
    from urllib.parse import quote

    forms = {"clear": value, "json": json.dumps(value)[1:-1], "percent": quote(value, safe=""),
             "percent-url": quote(value)}  # fmt: skip
    for k in range(3):
        encoded = base64.b64encode(b"\0" * k + value.encode()).decode()
        core = encoded[4 if k else 0 : len(encoded) - 4]
        if len(core) >= 12:
            forms[f"base64+{k}"] = core
    return forms


def _found(text: str) -> list[str]:
    return [f"{name} ({form})" for name, value in CLEAR.items() for form, enc in _forms(value).items()
            if enc in text]  # fmt: skip


def _osc(fmt: str, out: str) -> list[str]:
    return ["render", "osc", "-f", OSC, "--format", fmt, "-o", out]


CHANNELS = {
    **{f"render osc {f} {o}": _osc(f, o) for f in ("cloud-init", "bash", "ignition") for o in ("raw", "json")},
    "render osc ignition init-pattern": [*_osc("ignition", "json"), "--api-server", "https://api.example"],
    "render userdata al2023 raw": COMMANDS["render userdata al2023 raw"],
    "render userdata bottlerocket json": COMMANDS["render userdata bottlerocket json"],
    **{f"validate {o}": ["validate", "-f", NC, "-f", NP, "-f", OSC, "-o", o] for o in ("table", "json", "yaml")},
    **{f"hash {o}": ["hash", "-f", NP, "-f", NC, "--cluster-info", INFO, "-o", o] for o in ("table", "json", "yaml", "markdown")},
    **{f"plan {o} --write": ["plan", "-f", NP, "-f", NC, "--cluster", "stacks/examples/cluster.json", "--catalog",
                             CATALOG, "-o", o, "--write", "{tmp}/claims.yaml"] for o in ("table", "json", "yaml", "markdown")},
    "drift json": ["drift", "-f", NP, "-f", NC, "--cluster", "stacks/examples/cluster.json", "--cluster-info", INFO,
                   "-o", "json"],
    "catalog --nodeclass yaml": ["catalog", "list", "--catalog", CATALOG, "--nodeclass", str(DATA / "gpu.yaml"),
                                 "-o", "yaml"],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CHANNELS))
def test_no_secret_in_any_channel_or_encoding(name: str, tmp_path: Path) -> None:
    """A real process: its stdout, its stderr and every file it wrote, searched for each planted
    secret in clear, JSON-escaped, percent-encoded and base64 (every alignment)."""
    import os
    import subprocess
    import sys

    args = [a.replace("{tmp}", str(tmp_path)) for a in CHANNELS[name]]
    proc = subprocess.run([sys.executable, "-m", "nodewright.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path.cwd())}, timeout=300, check=False)  # fmt: skip
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), proc.stderr
    written = "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())
    assert _found(proc.stdout) == [], "stdout"
    assert _found(proc.stderr) == [], "stderr"
    assert _found(written) == [], "written files"
    if name.startswith("render"):
        assert redact.REDACTED in proc.stdout


def test_errors_echoing_a_secret_are_redacted_in_every_form(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text((DATA / "nodepools.yaml").read_text().replace(
        "nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}",
        'nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n'
        '      expireAfter: "password=Sup3rS3cretPassw0rd AKIAQWERTYUIOPASDFGH"',
    ))  # fmt: skip
    for out in ("table", "json", "yaml"):
        result = CliRunner().invoke(main, ["validate", "-f", str(bad), "-o", out])
        assert result.exit_code == 1 and "error: " in result.stderr, result.stderr
        assert _found(result.stdout + result.stderr) == []


@pytest.mark.parametrize(
    "text",
    [
        "data:,aws_secret_access_key%20%3D%20wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY1%0A",
        "data:,key%3DAKIAQWERTYUIOPASDFGH",
        'data:;base64,' + base64.b64encode(b"TOKEN=q7x2mz.4f8k1p0c9d3b6a5e\n").decode(),
        "base64 -d << 'EOF'\n" + _wrapped(b"x" * 70 + b"\npassword=Sup3rS3cretPassw0rd\n" + b"y" * 70) + "\nEOF\n",
        json.dumps({"content": "user=admin\npassword=Sup3rS3cretPassw0rd\n"}),
        json.dumps({"content": "-----BEGIN CERTIFICATE-----\n" + CLEAR["certificate"] + "\n-----END CERTIFICATE-----"}),
        json.dumps({"c": "#!/bin/bash\nexport TOKEN=q7x2mz.4f8k1p0c9d3b6a5e\n"}),
    ],
    ids=["percent-secret-key", "percent-key-id", "data-url-base64", "heredoc-base64-wrapped",
         "json-escaped-password", "json-escaped-certificate", "json-escaped-token"],
)  # fmt: skip
def test_the_redactor_looks_through_encodings(text: str) -> None:
    out = redact.redact(text)
    assert redact.REDACTED in out
    assert _found(out) == [], out
    assert len(out) < len(text) + 20 or "\n" in text  # the rest of the text survives


def test_encoded_ordinary_text_stays() -> None:
    text = (
        "data:,%5Bdefault%5D%0Aregion%20%3D%20eu-west-1%0A "
        + base64.b64encode(b"hello nodewright\n").decode()
    )
    assert redact.redact(text) == text
