"""The SHA-256 of pyproject.toml's dependency tables (``[project] dependencies`` and
``[project.optional-dependencies]``) as canonical JSON: what every lock file records in its header, so a
dependency change that did not refresh the locks is caught (tests/contracts/test_lock.py)."""

import hashlib
import json
import sys
import tomllib
from pathlib import Path


def dependency_sum(pyproject: Path) -> str:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    tables = {"dependencies": project.get("dependencies", []),
              "optional-dependencies": project.get("optional-dependencies", {})}
    return hashlib.sha256(json.dumps(tables, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


if __name__ == "__main__":
    print(dependency_sum(Path(sys.argv[1] if len(sys.argv) > 1 else "pyproject.toml")))
