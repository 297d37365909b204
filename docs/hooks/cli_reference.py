"""MkDocs hook: the CLI reference (docs/cli.md) generated from the Typer app at build time.

The page holds the marker ``<!-- viewcert-cli -->``; it is replaced by Typer's own Markdown for
``viewcert.cli:app`` (``typer.cli.get_docs_for_click``, what ``typer viewcert.cli utils docs`` prints),
headings demoted one level under the page title. Why a hook and not a plugin: mkdocs-typer2's native engine
and mkdocs-click walk ``click`` objects, and Typer ≥ 0.2x builds its commands on its own vendored click
(``typer._click``), which they do not understand; the legacy engine shells out to ``typer`` and renders an
empty page, without an error, when that fails. This hook fails the build instead.
"""

from __future__ import annotations

import re

MARKER = "<!-- viewcert-cli -->"


def cli_markdown() -> str:
    """Typer's Markdown for every ``viewcert`` command, headings one level down."""
    import typer
    from typer.cli import get_docs_for_click

    from viewcert.cli import app

    command = typer.main.get_command(app)
    ctx = typer.Context(command, info_name="viewcert")
    text = get_docs_for_click(obj=command, ctx=ctx, name="viewcert")
    n_commands = text.count("\n## ")
    if n_commands < 5:
        raise RuntimeError(f"CLI reference: only {n_commands} commands found in viewcert.cli:app")
    return re.sub(r"^(#+) ", r"#\1 ", text, flags=re.MULTILINE)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs hook signature
    if page.file.src_uri != "cli.md":
        return markdown
    if MARKER not in markdown:
        raise RuntimeError(f"docs/cli.md lacks the marker {MARKER}")
    return markdown.replace(MARKER, cli_markdown())
