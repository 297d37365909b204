"""Root-command options live for one command: limits given to one ``viewcert`` call in a process never reach
the next call in the same process (CliRunner, a notebook, an embedding program)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from viewcert.cli import app
from viewcert.limits import DEFAULT_LIMITS, active_limits


def test_limits_of_one_command_do_not_leak_into_the_next(tmp_path):
    manifest = tmp_path / "big.json"
    manifest.write_text(json.dumps({"format": "viewcert-certificate/2", "pad": "x" * 400}))
    runner = CliRunner()
    # 200 bytes: the 400-byte certificate is over the limit, refused before it is read
    low = runner.invoke(app, ["--max-json-bytes", "200", "verify", str(manifest)])
    assert low.exit_code == 2
    assert "200" in low.output
    assert active_limits() == DEFAULT_LIMITS  # the command ended: its limits are gone
    # the same file with no option: the default limit (256 MiB) lets it be read; it then fails on its content
    again = runner.invoke(app, ["verify", str(manifest)])
    assert again.exit_code == 2
    assert "200" not in again.output


def test_verify_takes_no_option_it_would_ignore(tmp_path):
    """verify recomputes from the certificate's recorded ligand, pocket and molecule scale: the options that set
    them on certify are refused by verify (a usage error naming the option, exit 2) instead of being accepted
    and silently ignored."""
    cert = tmp_path / "certificate.json"
    cert.write_text("{}")
    for option, value in (("--ligand", "PNM"), ("--pocket", "6"), ("--molecule-scale", "per-view")):
        res = CliRunner().invoke(app, ["verify", str(cert), option, value])
        assert res.exit_code == 2, (option, res.output)
        assert option in res.output and "No such option" in res.output
