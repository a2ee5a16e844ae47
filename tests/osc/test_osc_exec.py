"""Run the rendered bash for real (paths moved under tmp, systemctl stubbed) and the init script
against a fake API server (a curl stub): bytes, modes, unit commands, run-once, placeholders."""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from nodewright.osc.initscript import init_script
from nodewright.osc.nodeplan import NodePlan, PlannedDropIn, PlannedFile, PlannedUnit
from nodewright.osc.render_bash import render_bash

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash missing")


def _stub(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/bash\n" + body, encoding="utf-8")
    path.chmod(0o755)


def _run(script: str, tmp: Path, *, path_env: str) -> subprocess.CompletedProcess[str]:
    file = tmp / "script.sh"
    file.write_text(script, encoding="utf-8")
    env = {"PATH": path_env, "HOME": str(tmp), "LC_ALL": "C.UTF-8"}
    return subprocess.run(
        [str(BASH), str(file)], capture_output=True, text=True, env=env, check=False, timeout=60
    )


def test_bash_script_writes_every_file_exactly_and_runs_units_once(tmp_path: Path) -> None:
    root = tmp_path / "root"
    systemd = root / "etc" / "systemd" / "system"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "systemctl.log"
    _stub(bin_dir, "systemctl", f'echo "$*" >> {log}\n')
    contents = {
        "plain": b"hello $HOME `id`\nNODEWRIGHT_EOF\n",
        "no-newline": b"x=1",
        "empty": b"",
        "binary": bytes(range(256)),
        "trailing": b"a\n\n\n",
        "token": b"<<BOOTSTRAP_TOKEN>>",
    }
    files = tuple(
        PlannedFile(
            path=str(root / "etc" / "nw" / name),
            data=data,
            mode=0o640,
            clear=name not in ("binary",),
        )
        for name, data in contents.items()
    )
    units = (
        PlannedUnit(
            name="a.service",
            content="[Unit]\nDescription=a\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n",
            content_clear=True,
            enable=None,
            command="start",
            drop_ins=(PlannedDropIn(name="10-x.conf", content="[Service]\nEnvironment=A=$B\n", clear=True),),
            file_paths=(),
        ),
        PlannedUnit(
            name="b.service",
            content=None,
            content_clear=True,
            enable=False,
            command=None,
            drop_ins=(),
            file_paths=(),
        ),
    )
    marker = str(tmp_path / "marker" / "applied")
    plan = NodePlan(name="t", namespace=None, purpose="provision", files=files, units=units, marker=marker)
    script = render_bash(plan).replace("/etc/systemd/system", str(systemd))
    path_env = f"{bin_dir}:/usr/bin:/bin"
    run = _run(script, tmp_path, path_env=path_env)
    assert run.returncode == 0, run.stderr
    for name, data in contents.items():
        target = root / "etc" / "nw" / name
        assert target.read_bytes() == data, name
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert (systemd / "a.service").read_text().startswith("[Unit]")
    assert (systemd / "a.service.d" / "10-x.conf").read_text() == "[Service]\nEnvironment=A=$B\n"
    assert stat.S_IMODE((systemd / "a.service").stat().st_mode) == 0o644
    assert not list((root / "etc" / "nw").glob(".nodewright.*")), "temp files left behind"
    assert log.read_text().splitlines() == [
        "daemon-reload",
        "enable a.service",
        "restart --no-block a.service",
        "disable b.service",
        "stop b.service",
    ]
    assert Path(marker).exists()
    again = _run(script, tmp_path, path_env=path_env)
    assert again.returncode == 0
    assert "already applied" in again.stdout
    assert len(log.read_text().splitlines()) == 5


@pytest.mark.parametrize("with_jq", [True, False], ids=["jq", "grep"])
def test_init_script_fetches_substitutes_and_runs_full_config(tmp_path: Path, with_jq: bool) -> None:
    work = tmp_path / "init"
    work.mkdir()
    (work / "bootstrap-token").write_text("abcdef.0123456789abcdef")
    (work / "machine-name").write_text("shoot--a--b-worker-z1-5f7c9-xyz")
    out = tmp_path / "out.txt"
    full = (
        "#!/bin/bash\n"
        f"printf '%s\\n' 'token=<<BOOTSTRAP_TOKEN>>' 'name=<<MACHINE_NAME>>' 'keep=<<OTHER>>' > {out}\n"
    )
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "data": {"full_config": base64.b64encode(full.encode()).decode()},
    }
    served = tmp_path / "served.json"
    served.write_text(json.dumps(secret, separators=(",", ":")))
    seen = tmp_path / "curl-args"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _stub(
        bin_dir,
        "curl",
        f'echo "$*" > {seen}\n'
        'while [ $# -gt 0 ]; do if [ "$1" = --output ]; then shift; out="$1"; fi; shift; done\n'
        f'/bin/cp {served} "$out"\n',
    )
    for tool in ("cat", "grep", "cut", "base64", "rm", "chmod", "sleep"):
        found = shutil.which(tool)
        assert found is not None
        os.symlink(found, bin_dir / tool)
    jq = shutil.which("jq")
    if with_jq:
        if jq is None:
            pytest.skip("jq not installed: the grep fallback is covered by the other case")
        os.symlink(jq, bin_dir / "jq")
    url = "https://api.example.com/api/v1/namespaces/kube-system/secrets/osc-result-x"
    run = _run(init_script(url, directory=str(work)), tmp_path, path_env=str(bin_dir))
    assert run.returncode == 0, run.stderr
    assert out.read_text().splitlines() == [
        "token=abcdef.0123456789abcdef",
        "name=shoot--a--b-worker-z1-5f7c9-xyz",
        "keep=<<OTHER>>",
    ]
    assert "Authorization: Bearer abcdef.0123456789abcdef" in seen.read_text()
    assert url in seen.read_text()
    assert not (work / "secret.json").exists(), "the fetched secret must not stay on disk"


def test_init_script_has_no_literal_placeholder() -> None:
    script = init_script("https://api.example.com/x")
    assert "<<BOOTSTRAP_TOKEN>>" not in script
    assert "<<MACHINE_NAME>>" not in script
