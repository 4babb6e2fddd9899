"""headmap in notebooks: attention weights you computed (NumPy, torch, transformers'
`outputs.attentions`) drawn by the <attention-heatmap> widget, in the notebook or in one
self-contained HTML file.

    import headmap
    headmap.show(attention, tokens, view="lines", layer=2, head=5)   # (L, H, Tq, Tk) weights
    fig = headmap.show(attention, tokens, html_action="return")
    fig.save("attention.html")                                        # or headmap.save(fig, path)
    headmap.head_view(outputs.attentions, tokens)                     # BertViz's names
    headmap.model_view(outputs.attentions, tokens)

The weights travel once, as float16 in a compressed safetensors file inside the HTML; the
widget's script, its worker and its wasm come inline, so nothing is fetched.

headmap's own attention core runs here too, natively, exact to the command line:

    model = headmap.load("models/all-MiniLM-L6-v2")                  # a folder from the Hub
    run = model.run(["The animal didn't cross the street.", "It was tired."])
    run.weights(row=0)                       # float32 (L, H, Tq, Tk)
    run.tokens(row=0)["queries"]
    run.heads()["previous_token"]            # (L, H), every score headmap has
    run.rollout(fusion="mean")               # (L, Tq, Tq)
    headmap.show(run)                        # the widget draws a run directly

Over a corpus (pyarrow): headmap.corpus.scores(model, "corpus.parquet") on one machine,
headmap.ray.scores(dataset, model_dir) on a Ray cluster.
"""

from ._bertviz import head_view, model_view
from ._figure import Figure
from ._show import save, show

__version__ = "0.1.0"
__all__ = ["Figure", "HeadmapError", "Model", "Run", "head_view", "load", "model_view", "save", "show"]

_NATIVE = ("HeadmapError", "Model", "Run", "load")


def __getattr__(name):
    # The native module loads on first use, so the figure code imports from a checkout where
    # it is not built (the pure-Python tests); the wheel always carries it.
    if name not in _NATIVE:
        raise AttributeError(f"module 'headmap' has no attribute {name!r}")
    try:
        from . import _native
    except ImportError as e:
        raise ImportError(
            f"headmap.{name} needs the native module headmap._native, which this copy of the package "
            "lacks: install the wheel (scripts/build/wheel builds it) or `pip install ./python`"
        ) from e
    return getattr(_native, name)
