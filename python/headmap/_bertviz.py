"""BertViz's head_view and model_view, argument for argument, drawn by headmap: a notebook that
imports them from headmap instead of bertviz keeps working. BertViz's head view is headmap's
`lines` view; its model view (every layer × head) is the `grid` view with head="all"."""

from __future__ import annotations

from ._build import make_figure, make_place
from ._run import is_run, place_of
from ._show import _check_action, deliver
from ._tokens import check_tokens
from ._weights import stack_layers


def head_view(attention=None, tokens=None, sentence_b_start=None, prettify_tokens=True, layer=None,
              heads=None, encoder_attention=None, decoder_attention=None, cross_attention=None,
              encoder_tokens=None, decoder_tokens=None, include_layers=None, html_action="view", *,
              lang=None, colormap=None, height=None, model_type=None, precision="f16", special_tokens=None):
    """BertViz's head view, as headmap's `lines` view.

    attention: outputs.attentions of a self-attention model (per layer (1, H, T, T)), with
        `tokens`; or, for an encoder–decoder, encoder_attention (encoder_tokens both sides),
        decoder_attention (decoder_tokens) and cross_attention (decoder_tokens as queries,
        encoder_tokens as keys), all three in one figure.
    sentence_b_start: index of sentence B's first token. BertViz offers A→A, A→B, B→A, B→B
        filters from it; headmap offers no filters: it keeps the index in the figure's data
        (`sentence_b_start`) for the widget to read, and checks it is within the tokens.
    prettify_tokens: BertViz's clean-up: `Ġ` and `▁` become spaces, `</w>` goes; `##` stays.
    layer: the layer shown first, counted in the model (it must be in include_layers).
    heads: the first one is the head shown (the lines view draws one head; default 0).
    include_layers: the layers kept (a list of indices or a slice); the figure counts them from 0.
    html_action: "view" displays and returns None; "return" returns the Figure, whose `.data`
        is the HTML and which has `_repr_html_` as BertViz's returned HTML object, and `.save(path)`.
    The keyword-only rest are headmap.show's.
    """
    _check_action(html_action)
    if is_run(attention) and model_type is None:
        model_type = attention.model_type
    places, kept = _places(attention, tokens, sentence_b_start, encoder_attention, decoder_attention,
                           cross_attention, encoder_tokens, decoder_tokens, include_layers, None,
                           prettify_tokens, special_tokens)
    if heads is None or isinstance(heads, int):
        head = heads or 0
    else:
        head = list(heads)[0] if len(heads) else 0
    figure = make_figure(places, shown=next(iter(places)), view="lines", layer=_shown_layer(layer, kept),
                         head=head, lang=lang, colormap=colormap, height=height, model_type=model_type,
                         precision=precision, sentence_b_start=sentence_b_start)
    return deliver(figure, html_action)


def model_view(attention=None, tokens=None, sentence_b_start=None, prettify_tokens=True, display_mode=None,
               encoder_attention=None, decoder_attention=None, cross_attention=None, encoder_tokens=None,
               decoder_tokens=None, include_layers=None, include_heads=None, html_action="view", *,
               layer=None, lang=None, colormap=None, height=None, model_type=None, precision="f16",
               special_tokens=None):
    """BertViz's model view, as headmap's `grid` view of every head (head="all").

    Arguments as head_view's, and BertViz's model-view ones: display_mode "light" or "dark"
    becomes the widget's theme (default: the widget's light, not BertViz's dark);
    include_heads keeps those heads (the figure counts them from 0). `layer` (keyword) is the
    layer shown first.
    """
    _check_action(html_action)
    if is_run(attention) and model_type is None:
        model_type = attention.model_type
    if display_mode not in (None, "light", "dark", "auto"):
        raise ValueError(f"display_mode={display_mode!r}: expected 'light' or 'dark' (or headmap's 'auto')")
    places, kept = _places(attention, tokens, sentence_b_start, encoder_attention, decoder_attention,
                           cross_attention, encoder_tokens, decoder_tokens, include_layers, include_heads,
                           prettify_tokens, special_tokens)
    figure = make_figure(places, shown=next(iter(places)), view="grid", layer=_shown_layer(layer, kept),
                         head="all", lang=lang, colormap=colormap, height=height, theme=display_mode,
                         model_type=model_type, precision=precision, sentence_b_start=sentence_b_start)
    return deliver(figure, html_action)


def _places(attention, tokens, sentence_b_start, encoder_attention, decoder_attention, cross_attention,
            encoder_tokens, decoder_tokens, include_layers, include_heads, pretty, special_tokens):
    """The figure's places in BertViz's order (encoder, decoder, cross) and the layers kept."""
    pair = (encoder_attention, decoder_attention, cross_attention, encoder_tokens, decoder_tokens)
    sources = []  # (place or None to infer, weights, queries, keys, the three arguments' names)
    if is_run(attention):  # headmap's own run: its places, their tokens, its first batch row
        if tokens is not None or any(x is not None for x in pair):
            raise ValueError("a headmap run carries its tokens and places: give it alone")
        for place in attention.places:
            weights, queries, keys, _ = place_of(attention, place, 0)
            sources.append((place, weights, queries, keys, ("attention", "tokens", "tokens")))
    elif attention is not None:
        if tokens is None:
            raise ValueError("'tokens' is required with attention=")
        if any(x is not None for x in pair):
            raise ValueError("attention= is a self-attention model's; encoder_attention=, decoder_attention=, "
                             "cross_attention=, encoder_tokens= and decoder_tokens= an encoder-decoder's: give one or the other")
        sources.append((None, attention, tokens, tokens, ("attention", "tokens", "tokens")))
    elif any(x is not None for x in pair[:3]):
        if sentence_b_start is not None:
            raise ValueError("sentence_b_start marks a sentence pair in attention= (a self-attention model), not in an encoder-decoder")
        for place, value, queries, keys, names in (
            ("encoder_self", encoder_attention, encoder_tokens, encoder_tokens, ("encoder_attention", "encoder_tokens", "encoder_tokens")),
            ("decoder_self", decoder_attention, decoder_tokens, decoder_tokens, ("decoder_attention", "decoder_tokens", "decoder_tokens")),
            ("cross", cross_attention, decoder_tokens, encoder_tokens, ("cross_attention", "decoder_tokens", "encoder_tokens")),
        ):
            if value is not None:
                if queries is None or keys is None:
                    needs = " and ".join(dict.fromkeys(f"'{n}'" for n in names[1:]))
                    raise ValueError(f"{needs} required with {names[0]}=")
                sources.append((place, value, queries, keys, names))
    else:
        raise ValueError("give attention= with tokens= (a self-attention model), or encoder_attention=, "
                         "decoder_attention=, cross_attention= with their tokens (an encoder-decoder)")
    places, kept = {}, None
    for place, value, queries, keys, (name, query_name, key_name) in sources:
        weights = stack_layers(value, name)  # (L, H, Tq, Tk)
        layers = _kept(include_layers, weights.shape[0], "include_layers", "layers")
        weights = weights[layers][:, _kept(include_heads, weights.shape[1], "include_heads", "heads")]
        kept = kept or layers
        qs, ks = check_tokens(queries, query_name), check_tokens(keys, key_name)
        key, one = make_place(weights, qs, ks, place=place, special_tokens=special_tokens, pretty=pretty, what=name)
        places[key] = one
    return places, kept


def _kept(include, count: int, name: str, of: str) -> list[int]:
    """BertViz's include_layers / include_heads: indices (or a slice) of what stays."""
    if include is None:
        return list(range(count))
    kept = list(range(count))[include] if isinstance(include, slice) else list(include)
    if not kept:
        raise ValueError(f"{name} keeps nothing: the model has {count} {of}")
    for i in kept:
        if isinstance(i, bool) or not hasattr(i, "__index__"):
            raise TypeError(f"{name} holds {i!r}: expected int indices")
        if not 0 <= int(i) < count:
            raise ValueError(f"{name} holds {int(i)}, out of range: the model has {count} {of}, counted from 0")
    return [int(i) for i in kept]


def _shown_layer(layer, kept: list[int]) -> int:
    """BertViz counts `layer` in the model; the figure holds only the kept layers."""
    if layer is None:
        return 0
    if layer not in kept:
        raise ValueError(f"layer={layer} is not among the layers kept (include_layers: {kept})")
    return kept.index(layer)
