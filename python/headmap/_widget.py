"""The widget's one classic script (dist/headmap-inline.js): it defines <attention-heatmap>,
carries its worker and wasm inside, and draws the figure it sits in. Every figure inlines the
same text, so a saved page's Content-Security-Policy needs one hash for it."""

from __future__ import annotations

import os
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGED = HERE / "static" / "headmap-inline.js"  # put there by scripts/build/wheel
CHECKOUT = HERE.parent.parent / "dist" / "headmap-inline.js"  # python/headmap → the repository
ENV = "HEADMAP_INLINE_JS"  # a path that wins over both (tests, or a widget built elsewhere)

_cache: dict[tuple, str] = {}


def script_path() -> Path:
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    for path in (PACKAGED, CHECKOUT):
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"the widget's script is missing: neither {PACKAGED} (a wheel built by scripts/build/wheel) "
        f"nor {CHECKOUT} (a checkout after scripts/build/all) exists; or set {ENV} to its path"
    )


def script() -> str:
    """The script's text as it will stand between <script> and </script>."""
    path = script_path()
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _cache:
        # The HTML parser turns CR LF into LF before the CSP hash is taken; do it first, so the
        # hash computed here is the one the browser computes.
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n").replace("\r", "\n")
        if re.search(r"</script", text, re.IGNORECASE):
            raise ValueError(f"{path} contains '</script', which would end the inline <script> early; the widget's build must escape it")
        if "<!--" in text and re.search(r"<script", text, re.IGNORECASE):
            raise ValueError(f"{path} contains '<!--' and '<script', which the HTML parser reads as an escaped script; the widget's build must escape them")
        _cache.clear()
        _cache[key] = text
    return _cache[key]
