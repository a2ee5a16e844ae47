"""The built wheel alone gives the whole product: CLI, Pulumi program, components, pack.

Offline by construction: the wheel is built from this source with ``pip wheel --no-deps
--no-build-isolation`` (the running environment's setuptools), then installed with ``--no-deps
--no-index`` into a fresh venv. Its dependencies are not downloaded: a ``.pth`` line points the
fresh venv at this environment's site-packages (a plain path entry: that directory's own ``.pth``
files, such as an editable install of nodewright, are not processed, so ``nodewright`` and
``nodewright_pulumi`` come from the wheel only — asserted). Everything then runs in a temporary
directory with no clone beside it and no PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from adopt_helpers import ROOT, SHA, run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(the fresh venv's bin directory, the environment to run it with)."""
    wheelhouse = tmp_path_factory.mktemp("wheelhouse")
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheelhouse),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = wheelhouse.glob("nodewright-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for must in (
        "nodewright_pulumi/program.py",
        "nodewright_pulumi/components/node_class.py",
        "nodewright_pulumi/policies/__main__.py",
        "nodewright/data/scaffold/dot-github/workflows/nodewright.yaml",
        "nodewright/data/scaffold/stacks/Pulumi.dev.yaml",
    ):
        assert must in names, must
    assert not any(n.startswith(("tests/", "components/", "policies/", "stacks/")) for n in names)
    venv = tmp_path_factory.mktemp("venv") / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=600)
    py = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    inst = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env=env,
    )
    assert inst.returncode == 0, inst.stderr
    # after the install (pip would otherwise see the environment's nodewright as installed)
    Path(purelib, "_nodewright_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    where = subprocess.run(
        [
            str(py),
            "-c",
            "import nodewright, nodewright_pulumi; print(nodewright.__file__, nodewright_pulumi.__file__)",
        ],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=wheelhouse,
    )
    assert where.returncode == 0, where.stderr
    assert where.stdout.count(purelib) == 2, where.stdout  # the wheel's, not a source tree's
    return venv / "bin", env


def test_version_init_validate_preview_from_the_wheel(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    bindir, env = installed
    exe = [str(bindir / "nodewright")]
    version = run(["--version"], tmp_path, exe=exe, env=env)
    assert version.returncode == 0 and version.stdout.strip().startswith("nodewright 0."), version.stderr
    init = run(["init", "fleet", "--action", f"nodewright/nodewright@{SHA}"], tmp_path, exe=exe, env=env)
    assert init.returncode == 0, init.stderr
    repo = tmp_path / "fleet"
    valid = run(
        ["validate", "-f", "stacks/nodepools.yaml", "-f", "stacks/nodeclasses.yaml"], repo, exe=exe, env=env
    )
    assert valid.returncode == 0, valid.stderr
    doc = run(["preview", "-o", "json"], repo, exe=exe, env=env)
    assert doc.returncode == 0, doc.stderr
    data = json.loads(doc.stdout)
    assert data["project"] == "fleet" and data["summary"]["mandatoryViolations"] == 0
    for fmt in ("markdown", "table"):
        out = run(
            ["preview", "-o", fmt, "--policy-pack-config", "policies/config.json"], repo, exe=exe, env=env
        )
        assert out.returncode == 0 and out.stdout.strip(), (fmt, out.stderr)


def test_the_policy_pack_from_the_wheel(installed: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """DIR/policies/__main__.py under the wheel's python builds the nodewright pack (PolicyPack
    recorded, not served), and pulumi_policy's analyzer runs it in-process over DIR's program."""
    bindir, env = installed
    assert run(["init", "fleet"], tmp_path, exe=[str(bindir / "nodewright")], env=env).returncode == 0
    repo = tmp_path / "fleet"
    script = f"""
import json, runpy, pulumi_policy
built = []
pulumi_policy.PolicyPack = lambda **kw: built.append(kw)
runpy.run_path({str(repo / "policies" / "__main__.py")!r}, run_name="__main__")
from pathlib import Path
from nodewright.policy import load_config_file
from nodewright.preview.analyzer import analyze
from nodewright.preview.runner import load_stack, run_program
run = run_program(load_stack(stack="dev", project_dir=Path({str(repo)!r})))
found = analyze(run.registrations, config=load_config_file(Path({str(repo / "policies" / "config.json")!r})))
print(json.dumps({{"name": built[0]["name"], "policies": [p.name for p in built[0]["policies"]],
                  "mandatory": [v.policy for v in found if v.enforcement == "mandatory"]}}))
"""
    done = run(["-c", script], tmp_path, exe=[str(bindir / "python")], env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["name"] == "nodewright"
    assert "imdsv2-required" in out["policies"] and out["mandatory"] == []
