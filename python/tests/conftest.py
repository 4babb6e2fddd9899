"""Shared fixtures. The pure-Python tests run with a stand-in for the widget's script, so they
need neither scripts/build/all nor a wheel; the notebook and JupyterLab tests use the real one."""

import pytest

PLACEHOLDER = "/* stand-in for dist/headmap-inline.js */ document.currentScript.dataset.ran = 'yes';\n"


@pytest.fixture(autouse=True)
def widget_placeholder(tmp_path, monkeypatch):
    path = tmp_path / "headmap-inline.js"
    path.write_text(PLACEHOLDER, encoding="utf-8")
    monkeypatch.setenv("HEADMAP_INLINE_JS", str(path))
    return path

