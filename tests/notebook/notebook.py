"""Runs a notebook that draws headmap figures from synthetic attention (NumPy only) in a real
kernel (nbclient + the venv's ipykernel), and writes what the notebook would show into a page
for the browser test: `python notebook.py OUT` writes OUT/executed.ipynb, OUT/page.html (the
cells' HTML outputs, as a notebook front end inserts them) and OUT/saved.html (headmap.save),
and prints a JSON summary. Also the source of the cells the JupyterLab test types in."""

import json
import sys
import time
from pathlib import Path

SETUP = """\
import numpy as np
import headmap
rng = np.random.default_rng(7)
tokens = ["[CLS]", "the", "animal", "did", "n't", "cross", "the", "street", "because", "it", "was", "too", "tire", "##d", ".", "[SEP]"]
L, H, T = 2, 4, len(tokens)
scores = rng.standard_normal((L, H, T, T)) * 3  # (L, H, Tq, Tk)
weights = np.exp(scores - scores.max(-1, keepdims=True))
weights /= weights.sum(-1, keepdims=True)
print(headmap.__file__)"""

SHOW = 'headmap.show(weights, tokens, layer=1, head=2, lang="en")'

RETURN = """\
fig = headmap.show(weights, tokens, view="lines", head=1, lang="en", html_action="return")
fig.save("saved.html")
fig"""


def main(out: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in (SETUP, SHOW, RETURN)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    start = time.perf_counter()
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(out)}}).execute()
    seconds = time.perf_counter() - start
    nbformat.write(nb, out / "executed.ipynb")

    printed = "".join(o.get("text", "") for o in nb.cells[0].outputs if o.output_type == "stream")
    figures = [o["data"]["text/html"] for cell in nb.cells[1:] for o in cell.outputs if "text/html" in o.get("data", {})]
    errors = [o for cell in nb.cells for o in cell.outputs if o.output_type == "error"]
    body = "\n".join(f'<section class="output">\n{html}\n</section>' for html in figures)
    page = f'<!doctype html>\n<html lang="en">\n<meta charset="utf-8">\n<link rel="icon" href="data:,">\n<title>notebook outputs</title>\n<body>\n{body}\n</body>\n</html>\n'
    (out / "page.html").write_text(page, encoding="utf-8")
    print(json.dumps({"seconds": seconds, "figures": len(figures), "errors": errors, "headmap": printed.strip(),
                      "sizes": [len(f) for f in figures], "cells": [cell_seconds(c) for c in nb.cells]}))


def cell_seconds(cell) -> float:
    """From the kernel's receipt of the cell to its reply, as nbclient records them."""
    from datetime import datetime

    timing = cell.metadata.get("execution", {})
    start, end = (datetime.fromisoformat(timing[k].replace("Z", "+00:00")) for k in ("iopub.execute_input", "shell.execute_reply"))
    return (end - start).total_seconds()


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--cells":
        print(json.dumps({"setup": SETUP, "show": SHOW}))
    else:
        main(Path(sys.argv[1]))
