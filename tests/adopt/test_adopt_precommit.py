"""The pre-commit hooks of .pre-commit-hooks.yaml, through ``pre-commit try-repo``.

A temporary git repository holds a good NodePool file, a bad one and a non-Karpenter YAML (a
workflow). ``pre-commit try-repo <this repository> nodewright-validate-system`` must fail naming
only the bad file's located errors. The ``system`` variant runs the nodewright on PATH (this
environment's): no hook environment is built, so nothing is downloaded. The ``python`` variant
(``nodewright-validate``, what a user's .pre-commit-config.yaml names) has pre-commit create a
virtualenv and pip-install this repository with its dependencies from PyPI: that needs the
network, so here only its definition is checked against the system one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from adopt_helpers import ROOT


def _hooks() -> dict[str, dict[str, object]]:
    return {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def test_hook_definitions() -> None:
    hooks = _hooks()
    py, system = hooks["nodewright-validate"], hooks["nodewright-validate-system"]
    assert py["language"] == "python" and system["language"] == "system"
    assert py["entry"] == system["entry"] == "nodewright validate --skip-foreign"
    assert py["types_or"] == system["types_or"] == ["yaml", "json"]


@pytest.mark.slow
def test_try_repo_reports_the_bad_file_only(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    pre_commit = Path(sys.executable).parent / "pre-commit"
    if not pre_commit.exists():
        pytest.skip("pre-commit missing: pip install -e '.[dev]'")
    repo = tmp_path / "user"
    repo.mkdir()
    good = (ROOT / "stacks" / "nodepools.yaml").read_text()
    (repo / "good.yaml").write_text(good)
    broken = next(yaml.safe_load_all(good))
    broken["metadata"]["name"] = "broken"
    broken["spec"]["template"]["spec"]["requirements"][0]["operator"] = "Within"
    (repo / "bad.yaml").write_text(yaml.safe_dump(broken))
    (repo / "ci.yaml").write_text("name: ci\non: push\njobs: {}\n")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    if (ROOT / "nodewright" / "__init__.py").is_file():  # this source, not an older install
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    subprocess.run(["git", "init", "-q", "."], cwd=repo, check=True, env=env)
    subprocess.run(["git", "add", "."], cwd=repo, check=True, env=env)

    def try_repo(*files: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(pre_commit), "try-repo", str(ROOT), "nodewright-validate-system", "--files", *files],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
            env=env,
            timeout=600,
        )

    ok = try_repo("good.yaml", "ci.yaml")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed" in ok.stdout
    bad = try_repo("good.yaml", "bad.yaml", "ci.yaml")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    errors = [line for line in bad.stdout.splitlines() if line.startswith("error:")]
    assert errors == [
        'error: bad.yaml:spec.template.spec.requirements[0].operator: unsupported value "Within"; '
        "use one of Gte, Lte, In, NotIn, Exists, DoesNotExist, Gt, Lt"
    ]
