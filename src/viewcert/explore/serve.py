"""The handler of ``viewcert explore --serve``: the standard library's static file server, confined to the site
folder. A request whose file resolves outside the site's real path (a symlink planted in a received folder,
``..`` in the URL) is answered 404 without opening anything (``io.confine.served``)."""

from __future__ import annotations

import functools
import os
from http.server import SimpleHTTPRequestHandler

from viewcert.io.confine import served


class ConfinedHandler(SimpleHTTPRequestHandler):
    """``SimpleHTTPRequestHandler`` serving only files whose real path lies inside ``directory``."""

    def send_head(self):
        path = self.translate_path(self.path)
        site = os.path.realpath(self.directory)
        # a folder is answered by its index.html (or a listing): each name the server may open is checked
        names = [path] + ([os.path.join(path, n) for n in ("index.html", "index.htm")] if os.path.isdir(path) else [])
        if any(served(site, p) is None for p in names if os.path.lexists(p)) or served(site, path) is None:
            self.send_error(404, "File not found")
            return None
        return super().send_head()


def confined_handler(site: str | os.PathLike):
    """A handler class for ``http.server`` serving the site folder ``site`` (its real path) and nothing else."""
    return functools.partial(ConfinedHandler, directory=os.path.realpath(site))


def serve_site(site: str | os.PathLike, port: int, say=print) -> None:
    """Serve ``site`` on 127.0.0.1:``port`` (0: a free port) until interrupted, saying where (``say``, one line)."""
    from http.server import ThreadingHTTPServer

    with ThreadingHTTPServer(("127.0.0.1", port), confined_handler(site)) as httpd:
        say(f"serving http://127.0.0.1:{httpd.server_address[1]}/index.html (Ctrl-C stops)")
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            say("stopped")
