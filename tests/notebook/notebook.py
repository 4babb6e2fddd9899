"""Runs a notebook that draws headmap figures from synthetic attention (NumPy only) in a real
kernel (nbclient + the venv's ipykernel), and writes what it shows into pages for the browser
test: `python notebook.py OUT` writes OUT/executed.ipynb, OUT/figure-<n>.html (each cell's
figure alone, as a front end inserts one output), OUT/page.html (all of them in one page, as an
exported notebook), OUT/fully-masked.html and OUT/saved.html (fig.save), and prints a JSON
summary.
`python notebook.py --cells` prints the cells the JupyterLab test opens."""

import json
import sys
import time
from pathlib import Path

SETUP = """\
import numpy as np
import headmap
rng = np.random.default_rng(7)

def softmax(scores, causal=False):  # (L, H, Tq, Tk)
    if causal:
        scores = np.where(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores, -np.inf)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    return w / w.sum(-1, keepdims=True)

tokens = ["[CLS]", "the", "animal", "did", "n't", "cross", "the", "street", "because", "it", "was", "too", "tire", "##d", ".", "[SEP]"]
L, H, T = 2, 4, len(tokens)
weights = softmax(rng.standard_normal((L, H, T, T)) * 3)
source = ["▁Das", "▁Tier", "▁war", "▁sehr", "▁müde", "</s>"]
target = ["<pad>", "▁The", "▁animal", "▁was", "▁tired"]
encoder = tuple(softmax(rng.standard_normal((1, H, 6, 6)) * 3) for _ in range(L))  # as outputs.encoder_attentions
decoder = tuple(softmax(rng.standard_normal((1, H, 5, 5)) * 3, causal=True) for _ in range(L))
cross = tuple(softmax(rng.standard_normal((1, H, 5, 6)) * 3) for _ in range(L))  # (1, H, Tq=target, Tk=source)
print(headmap.__file__)"""

SHOW = 'headmap.show(weights, tokens, layer=1, head=2, lang="en")'

# BERT-base's shape at 512 tokens: 12 layers x 12 heads, 85 MB of HTML; the JupyterLab test times it
BIG = """\
import time
start = time.perf_counter()
big = np.stack([softmax(rng.standard_normal((12, 512, 512)) * 3) for _ in range(12)]).astype(np.float32)
big_tokens = ["[CLS]", *(f"w{i}" for i in range(510)), "[SEP]"]
made = time.perf_counter()
headmap.show(big, big_tokens, layer=11, head=11, lang="en")
print(f"weights made in {made - start:.1f} s, headmap.show took {time.perf_counter() - made:.1f} s")"""

# (label, source): each cell displays one figure; the first is the one the JupyterLab test runs
FIGURES = [
    ("heatmap", SHOW),
    ("lines, returned and saved", 'fig = headmap.show(weights, tokens, view="lines", head=1, lang="en", html_action="return")\nfig.save("saved.html")\nfig'),
    ("grid", 'headmap.show(weights, tokens, view="grid", head="all", lang="en")'),
    ("atlas", 'headmap.show(weights, tokens, view="atlas", lang="en")'),
    ("rollout", 'headmap.show(weights, tokens, view="rollout", lang="en")'),
    ("head_view of an encoder-decoder", "headmap.head_view(encoder_attention=encoder, decoder_attention=decoder, cross_attention=cross, encoder_tokens=source, decoder_tokens=target, lang='en')"),
    ("model_view", "headmap.model_view(tuple(w[None] for w in weights), tokens, include_layers=[1], lang='en')"),
    ("causal decoder heatmap", 'headmap.show(np.stack(decoder)[:, 0], target, head=1, lang="en")'),
    ("cross heatmap", 'headmap.show(np.stack(cross)[:, 0], target, key_tokens=source, place="cross", lang="en")'),
    # a padded batch row as transformers gives it: no query attends to [PAD], [PAD] attends as usual
    ("padded encoder row", 'pad = rng.standard_normal((L, H, 6, 6)) * 3\npad[..., 5] = -np.inf\nheadmap.show(softmax(pad), ["[CLS]", "a", "b", "c", "[SEP]", "[PAD]"], lang="en")'),
]

# a query that saw nothing (all its weights 0, as a model that zeroes masked rows gives them):
# headmap.show accepts it and marks it PAD; kept out of page.html so it fails on its own
MASKED = 'masked = softmax(rng.standard_normal((L, H, 4, 4)))\nmasked[:, :, 3] = 0\nheadmap.show(masked, ["[CLS]", "a", "[SEP]", "[PAD]"], lang="en")'


def page(body: str) -> str:
    return ('<!doctype html>\n<html lang="en">\n<meta charset="utf-8">\n<link rel="icon" href="data:,">\n'
            f"<title>notebook outputs</title>\n<body>\n{body}\n</body>\n</html>\n")


def main(out: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in (SETUP, *(source for _, source in FIGURES), MASKED)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    start = time.perf_counter()
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(out)}}).execute()
    seconds = time.perf_counter() - start
    nbformat.write(nb, out / "executed.ipynb")

    printed = "".join(o.get("text", "") for o in nb.cells[0].outputs if o.output_type == "stream")
    errors = [o for cell in nb.cells for o in cell.outputs if o.output_type == "error"]
    figures = []
    masked = [o["data"]["text/html"] for o in nb.cells[-1].outputs if "text/html" in o.get("data", {})]
    (out / "fully-masked.html").write_text(page("\n".join(masked)), encoding="utf-8")
    for (label, _), cell in zip(FIGURES, nb.cells[1:]):
        html = [o["data"]["text/html"] for o in cell.outputs if "text/html" in o.get("data", {})]
        figures.append({"label": label, "count": len(html), "size": sum(map(len, html)), "seconds": cell_seconds(cell)})
        # each figure alone, as a notebook front end inserts one output
        (out / f"figure-{len(figures) - 1}.html").write_text(page("\n".join(html)), encoding="utf-8")
    # every figure in one page, as an exported notebook has them
    outputs = [o["data"]["text/html"] for cell in nb.cells[1:-1] for o in cell.outputs if "text/html" in o.get("data", {})]
    (out / "page.html").write_text(page("\n".join(f'<section class="output">\n{h}\n</section>' for h in outputs)), encoding="utf-8")
    print(json.dumps({"seconds": seconds, "figures": figures, "errors": errors, "headmap": printed.strip()}))


def cell_seconds(cell) -> float:
    """From the kernel's receipt of the cell to its reply, as nbclient records them."""
    from datetime import datetime

    timing = cell.metadata.get("execution", {})
    start, end = (datetime.fromisoformat(timing[k].replace("Z", "+00:00")) for k in ("iopub.execute_input", "shell.execute_reply"))
    return (end - start).total_seconds()


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--cells":
        print(json.dumps({"setup": SETUP, "show": SHOW, "big": BIG}))
    else:
        main(Path(sys.argv[1]))
