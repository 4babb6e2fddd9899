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
"""

from ._bertviz import head_view, model_view
from ._figure import Figure
from ._show import save, show

__version__ = "0.1.0"
__all__ = ["Figure", "head_view", "model_view", "save", "show"]
