"""The handler of ``viewcert explore --serve``: the standard library's static file server, confined to the site
folder. A request whose file resolves outside the site's real path (a symlink planted in a received folder,
``..`` in the URL) is answered 404 without opening anything (``io.confine.served``)."""

from __future__ import annotations

import functools
import os
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

from viewcert.io.confine import served
from viewcert.sanitize import console_text


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


class QuietServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` that says nothing when a client goes away mid-response (a closed tab, a cancelled
    download: ``BrokenPipeError``, ``ConnectionResetError``) and one line for any other error of a request,
    never a traceback."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            return
        print(f"viewcert: warning: a request from {client_address[0]} failed: "
              f"{console_text(f'{type(exc).__name__}: {exc}', keep_newlines=False)[:300]}", file=sys.stderr)


def serve_site(site: str | os.PathLike, port: int, say=print) -> None:
    """Serve ``site`` on 127.0.0.1:``port`` (0: a free port) until interrupted, saying where (``say``, one line); a
    client that disconnects mid-response is not an error (``QuietServer``)."""
    with QuietServer(("127.0.0.1", port), confined_handler(site)) as httpd:
        say(f"serving http://127.0.0.1:{httpd.server_address[1]}/index.html (Ctrl-C stops)")
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            say("stopped")
