"""headmap.show and headmap.save: the package's own API."""

from __future__ import annotations

import os

from ._build import make_figure, make_place
from ._figure import Figure
from ._run import is_run, place_of
from ._tokens import check_tokens
from ._weights import stack_layers

HTML_ACTIONS = ("view", "return")


def show(attention, tokens=None, *, place=None, key_tokens=None, view="heatmap", layer=0, head=0,
         lang=None, colormap=None, height=None, html_action="view", sentence_b_start=None,
         model_type=None, precision="f16", special_tokens=None, row=0):
    """Draws attention weights in a notebook with the <attention-heatmap> widget.

    attention: (L, H, Tq, Tk) weights — a NumPy array, a torch tensor, or transformers'
        `outputs.attentions` (a tuple of per-layer (1, H, Tq, Tk) or (H, Tq, Tk)). Each query's
        row sums to 1 (a row of zeros is a fully masked query). Or a run of headmap's own core
        (`headmap.load(dir).run(texts)`), which carries its tokens: batch row `row` at `place`
        (default its first), the batch's padding left out.
    tokens: the Tq query tokens (list of str); the keys too unless `key_tokens` names Tk others.
        A key no query attends to in any layer or head is marked PAD (the mask hid it), and so
        is a query whose weights are all 0.
    place: "encoder_self", "decoder_self" or "cross". By default weights with nothing above
        the diagonal are a decoder's self-attention (mask "causal"), others an encoder's (mask
        "padding"). A decoder_self whose weights see later keys gets mask "none": nothing was hidden.
    view: heatmap, grid, lines, atlas or rollout. layer, head: counted from 0; head="all" too.
    lang: "en" or "ko" (default: the page's). colormap: viridis, magma or blues.
    height: CSS pixels, written as the element's `height` attribute.
    html_action: "view" displays the figure through IPython and returns None; "return" returns
        the Figure (display it, read its HTML in `.data`, or `.save("fig.html")`).
    sentence_b_start: index of sentence B's first token in a sentence pair, kept in the figure's
        data (`sentence_b_start`) for the widget to read; nothing else is done with it here.
    model_type: free text kept with the figure, e.g. model.config.model_type.
    precision: "f16" (default: half the bytes, ~3 significant digits) or "f32".
    special_tokens: tokens to mark special (default: [CLS], [SEP], <s>, </s>, <pad>, … ).
    """
    _check_action(html_action)
    if is_run(attention):
        if tokens is not None or key_tokens is not None:
            raise TypeError("a headmap run carries its tokens: show(run) takes no tokens")
        model_type = attention.model_type if model_type is None else model_type
        attention, tokens, key_tokens, place = place_of(attention, place, row)
    elif tokens is None:
        raise TypeError("show needs the tokens of the weights: show(attention, tokens)")
    elif row != 0:
        raise TypeError("row picks a batch row of a headmap run; slice your own weights instead")
    weights = stack_layers(attention)  # (L, H, Tq, Tk)
    queries = check_tokens(tokens, "tokens")
    keys = queries if key_tokens is None else check_tokens(key_tokens, "key_tokens")
    name, one = make_place(weights, queries, keys, place=place, special_tokens=special_tokens)
    figure = make_figure({name: one}, shown=name, view=view, layer=layer, head=head, lang=lang,
                         colormap=colormap, height=height, model_type=model_type,
                         precision=precision, sentence_b_start=sentence_b_start)
    return deliver(figure, html_action)


def save(figure_or_attention, *args, path=None, **options):
    """Writes one self-contained HTML page (no network, a strict Content-Security-Policy).

        headmap.save(figure, "fig.html")                  # a Figure from html_action="return"
        headmap.save(attention, tokens, "fig.html", view="lines", head=3)   # show's arguments

    Returns the path written.
    """
    args = list(args)
    if path is None:
        if not args or not isinstance(args[-1], (str, os.PathLike)):
            raise TypeError("headmap.save needs a path: save(figure, 'fig.html') or save(attention, tokens, 'fig.html', ...)")
        path = args.pop()
    if isinstance(figure_or_attention, Figure):
        if args or options:
            raise TypeError("headmap.save(figure, path) takes no other arguments: the figure is already made")
        figure = figure_or_attention
    else:
        if "html_action" in options:
            raise TypeError("headmap.save writes a file; html_action belongs to show")
        figure = show(figure_or_attention, *args, html_action="return", **options)
    return figure.save(path)


def deliver(figure: Figure, html_action: str):
    _check_action(html_action)
    if html_action == "return":
        return figure
    try:
        from IPython.display import HTML, display
    except ImportError:
        raise ImportError(
            "html_action='view' displays the figure through IPython, which is not installed: "
            "pip install ipython (Jupyter has it), or pass html_action='return' and .save('fig.html')"
        ) from None
    display(HTML(figure.data))
    return None  # as BertViz: a returned figure would be displayed a second time


def _check_action(html_action) -> None:
    if html_action not in HTML_ACTIONS:
        raise ValueError(f"html_action={html_action!r}: expected 'view' (display now) or 'return' (get the figure)")
