"""The README walkthrough's harness step installs what it needs with one documented command (issue 57, item 5):
``make inspect`` adds Inspect AI to the checkout's ``.venv``, inspect-ai and its requirements only, each at the
dev lock's version. Before, ``make run`` installed the base lock alone and the one install line for Inspect was in
docs/harnesses.md (``pip install inspect-ai``, unlocked).

Checked without the network: the target's recipe as make prints it (``make -n``), the README naming it at the
harness step, and, from the installed distributions' own metadata (``importlib.metadata``, markers evaluated),
that the dev lock pins inspect-ai and every distribution it needs, recursively, so the constrained install
resolves to the lock and nothing else."""

from __future__ import annotations

import re
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
DEV_LOCK = ROOT / "locks" / "linux-x86_64-py311" / "dev.txt"


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        m = re.match(r"([A-Za-z0-9_.\-]+)==(\S+)", line.strip())
        if m:
            out[_norm(m.group(1))] = m.group(2)
    return out


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_inspect_installs_inspect_from_the_dev_lock():
    r = subprocess.run(["make", "-n", "inspect"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    spec = re.search(r'"inspect-ai[^"]*"', (ROOT / "pyproject.toml").read_text()).group(0)
    lines = r.stdout.splitlines()
    install = [x for x in lines if "inspect-ai" in x and "pip install" in x]
    assert install, r.stdout
    assert all(f"-c locks/linux-x86_64-py311/dev.txt {spec}" in x for x in install), install
    assert not any("-r locks/linux-x86_64-py311/dev.txt" in x for x in lines)  # not every extra: inspect only


def test_readme_names_the_command_at_the_harness_step():
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Your own benchmark\n", 1)[1].split("\n## ", 1)[0]
    step5 = section.split("\n5. ", 1)[1].split("\n6. ", 1)[0]
    assert "`make inspect`" in step5 and "dev lock" in step5


def test_the_dev_lock_pins_inspect_and_everything_it_needs():
    pins = _pins(DEV_LOCK)
    assert _norm("inspect-ai") in pins
    try:
        metadata.distribution("inspect-ai")
    except metadata.PackageNotFoundError:
        pytest.skip("inspect-ai is not installed here (make test installs it)")
    seen, todo = set(), ["inspect-ai"]
    while todo:
        name = _norm(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        for req in metadata.requires(name) or ():
            r = Requirement(req)
            if r.marker is None or r.marker.evaluate({"extra": ""}):
                todo.append(r.name)
    missing = sorted(n for n in seen if n not in pins)
    assert not missing, f"inspect-ai needs distributions the dev lock does not pin: {missing}"
    assert len(seen) > 30  # inspect-ai's closure (57 distributions when measured): the walk found it
