"""The install is locked (issue 37): every lock file pins every distribution exactly, records the dependency
tables of the pyproject.toml it was made from, and admits what pyproject.toml asks for; the versions a
certificate records are the locked ones. A dependency change that did not refresh the locks (`make lock`) fails
here."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "locks"))
from pyproject_sum import dependency_sum  # noqa: E402

LOCKS = sorted(ROOT.glob("locks/linux-*-py311/*.txt"))
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)\s*$")


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = PIN.match(line)
        assert m, f"{path.name}: not an exact pin: {line!r}"
        pins[canonicalize_name(m.group(1))] = m.group(2)
    return pins


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_a_lock_for_this_platform_family():
    names = {p.relative_to(ROOT / "locks").as_posix() for p in LOCKS}
    assert {"linux-x86_64-py311/base.txt", "linux-x86_64-py311/dev.txt", "linux-x86_64-py311/harness.txt",
            "linux-aarch64-py311/base.txt"} <= names


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_lock_records_the_dependency_tables_it_was_made_from(lock):
    header = lock.read_text(encoding="utf-8").splitlines()[:3]
    recorded = [h.split(":", 1)[1].strip() for h in header if h.startswith("# pyproject-dependencies-sha256:")]
    assert recorded == [dependency_sum(ROOT / "pyproject.toml")], (
        f"{lock.relative_to(ROOT)} was made from other dependency tables than pyproject.toml's: run `make lock`")


def _required(extras: tuple[str, ...]) -> list[Requirement]:
    p = _project()
    reqs = [Requirement(r) for r in p["dependencies"]]
    for e in extras:
        reqs += [Requirement(r) for r in p["optional-dependencies"][e]]
    return reqs


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_requirement_is_pinned_at_a_version_it_admits(lock):
    pins = _pins(lock)
    extras = {"dev.txt": ("test", "molecules", "docs", "learn", "interactions", "plip", "foreign", "images"),
              "harness.txt": ("harness",)}.get(lock.name, ())
    for req in _required(extras):
        name = canonicalize_name(req.name)
        assert name in pins, f"{lock.relative_to(ROOT)}: {req} is not pinned"
        assert req.specifier.contains(Version(pins[name]), prereleases=True), (
            f"{lock.relative_to(ROOT)}: {name}=={pins[name]} does not satisfy {req}")


def test_base_pins_agree_with_dev_and_across_platforms():
    base = _pins(ROOT / "locks/linux-x86_64-py311/base.txt")
    dev = _pins(ROOT / "locks/linux-x86_64-py311/dev.txt")
    arm = _pins(ROOT / "locks/linux-aarch64-py311/base.txt")
    assert {k: dev.get(k) for k in base} == base
    shared = set(base) & set(arm)
    # what a certificate records (viewcert.certify.certificate.library_versions) is pinned the same on both
    for lib in ("numpy", "scipy", "numba", "spglib", "moyopy", "pymatgen-core", "gemmi"):
        assert lib in shared and base[lib] == arm[lib], lib
    assert {k: base[k] for k in shared} == {k: arm[k] for k in shared}


def test_the_harness_lock_is_the_base_lock_plus_the_harness_and_cpu_only():
    """The harness venv runs viewcert's `ladder` and replay models: the package's own libraries at the base lock's
    versions; torch's CPU build, no CUDA distribution, no torchvision (PyPI's cannot import beside a CPU torch)."""
    base = _pins(ROOT / "locks/linux-x86_64-py311/base.txt")
    harness = _pins(ROOT / "locks/linux-x86_64-py311/harness.txt")
    assert {k: harness.get(k) for k in base} == base
    assert harness["torch"].endswith("+cpu")
    assert not [n for n in harness if n.startswith(("nvidia", "cuda", "triton")) or n == "torchvision"]
    assert harness["ms-vlmeval"] == "0.0.20"


def test_the_installed_libraries_are_the_locked_ones():
    """In the venv `make test` builds from the lock: the versions a certificate records are the pinned ones."""
    from importlib.metadata import version

    pins = _pins(ROOT / "locks/linux-x86_64-py311/dev.txt")
    for lib in ("numpy", "scipy", "numba", "spglib", "moyopy", "pymatgen-core", "gemmi"):
        if version(lib) != pins[canonicalize_name(lib)]:
            pytest.skip(f"this environment is not the locked venv ({lib} {version(lib)}): `make test` builds it")
    from viewcert.certify.certificate import library_versions

    rec = library_versions()
    assert rec["numpy"] == pins["numpy"] and rec["scipy"] == pins["scipy"] and rec["numba"] == pins["numba"]
    assert rec["pymatgen"] == pins["pymatgen-core"] and rec["gemmi"] == pins["gemmi"]
