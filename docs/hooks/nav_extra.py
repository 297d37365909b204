"""MkDocs hook: pages in docs/ that mkdocs.yml's nav does not list are appended under a "More" section.

Engineers add pages (docs/molecules.md, docs/speed.md, ...) without editing mkdocs.yml; without this hook
they would build but be reachable only by search. Titles come from each page's first heading. Pages under
``api/`` are never added (the API reference lists its own pages).
"""

from __future__ import annotations

from mkdocs.structure.nav import Section
from mkdocs.structure.pages import Page

TITLE = "More"


def on_nav(nav, config, files):
    listed = {p.file.src_uri for p in nav.pages}
    extra = sorted((f for f in files.documentation_pages()
                    if f.src_uri not in listed and not f.src_uri.startswith("api/")), key=lambda f: f.src_uri)
    if not extra:
        return nav
    pages = [f.page if f.page is not None else Page(None, f, config) for f in extra]
    section = Section(TITLE, pages)
    for p in pages:
        p.parent = section
    nav.items.append(section)
    previous = nav.pages[-1] if nav.pages else None
    for p in pages:
        p.previous_page, previous = previous, p
        if p.previous_page is not None:
            p.previous_page.next_page = p
    nav.pages.extend(pages)
    return nav
