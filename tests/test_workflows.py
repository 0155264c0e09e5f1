"""The GitHub workflows, checked offline: actionlint finds nothing in them and does find a broken one;
the GPU workflow offers every chapter and scale."""

import subprocess
import sys

import pytest
import yaml
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import actionlint  # noqa: E402  (tools/actionlint.py)

WORKFLOWS = ROOT / ".github" / "workflows"
needs_actionlint = pytest.mark.skipif(actionlint.available() is not None,
                                      reason=f"actionlint cannot run: {actionlint.available()}")

BROKEN = """name: broken
on:
  workflow_dispatch:
    inputs:
      chapter: {type: string, required: true}
jobs:
  run:
    runs-on: [self-hosted, gpu, tpu]
    steps:
      - uses: actions/upload-artifact@v4
        with: {name: x, path: runs/, retention: 3}
      - run: echo "${{ inputs.chpter }}"
"""


def lint(*paths):
    """Exit status and printed findings of tools/actionlint.py, as `make lint` runs it."""
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "actionlint.py"), *map(str, paths)],
                         capture_output=True, text=True, cwd=ROOT)
    return run.returncode, run.stdout


def test_the_three_workflows_exist():
    assert sorted(p.name for p in WORKFLOWS.glob("*.yml")) == ["book.yml", "gpu-chapter.yml", "tests.yml"]


@pytest.mark.slow   # over 3 s on a quiet 2-core CPU (issue 39): make test, not make check
@needs_actionlint
def test_workflows_pass_actionlint():
    status, out = lint()
    assert (status, out) == (0, "")


@pytest.mark.slow   # over 3 s on a quiet 2-core CPU (issue 39): make test, not make check
@needs_actionlint
def test_actionlint_catches_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(BROKEN)
    status, out = lint(broken)
    assert status == 1
    assert 'label "tpu" is unknown' in out and 'label "gpu"' not in out   # gpu: .github/actionlint.yaml
    assert 'input "retention" is not defined in action "actions/upload-artifact@v4"' in out
    assert 'property "chpter" is not defined' in out


def test_gpu_workflow_offers_every_chapter_and_scale():
    from nadcore import plan, presets

    flow = yaml.safe_load((WORKFLOWS / "gpu-chapter.yml").read_text())
    inputs = flow[True]["workflow_dispatch"]["inputs"]   # YAML 1.1 reads the key `on` as True
    assert inputs["chapter"]["options"] == list(plan.CHAPTERS)
    assert inputs["scale"]["options"] == list(presets.SCALES) and inputs["scale"]["default"] == "paper"
    assert flow["jobs"]["run"]["runs-on"] == ["self-hosted", "gpu"]
