"""A saved figure's page: one file that opens from disk or any host, allowed to run only its
own inline script (by hash), wasm, and the blob: worker that script starts."""

from __future__ import annotations

import base64
import hashlib
import html


def script_hash(text: str) -> str:
    """A CSP source for an inline script: sha256 of its UTF-8 text, base64."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def policy(scripts: list[str]) -> str:
    hashes = " ".join(dict.fromkeys(script_hash(s) for s in scripts))  # one hash per distinct text
    return "; ".join([
        "default-src 'none'",  # no fetch, no fonts, no frames: the file holds all it needs
        f"script-src {hashes} 'wasm-unsafe-eval'",
        "worker-src blob:",  # the widget starts its worker from a blob of its own text
        "img-src blob: data:",  # the widget's PNG and SVG downloads
        "style-src 'self'",  # constructable stylesheets only: no style attribute, no <style>
    ])


def page(body: str, scripts: list[str], *, title: str, lang: str) -> str:
    return (
        "<!doctype html>\n"
        f'<html lang="{html.escape(lang)}">\n'
        "<head>\n"
        '<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy(scripts), quote=False)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'  # else the browser asks the host for /favicon.ico
        f"<title>{html.escape(title)}</title>\n"
        "</head>\n"
        "<body>\n"
        f"{body}\n"
        "</body>\n"
        "</html>\n"
    )
