// What the core accepts, for the explorer and the widget: where attention is used, which
// masks each place takes (a link or an attribute naming another is set right), how long a text
// may be.

/** The most characters a text may have: the core's MAX_TEXT_CHARS (src/tokenize/mod.rs). */
export const MAX_TEXT_CHARS = 32_768;

export const PLACES = ["encoder_self", "decoder_self", "cross"];
export const MASKS = ["none", "padding", "causal", "cross"];

/**
 * The masks `place` can run with: its own and the what-ifs the core accepts there. A loaded
 * model says this itself (`info.places[i].masks`, from the core); this copy serves only a link
 * read before any model is loaded, and tests of the page without wasm.
 */
export function masksFor(place) {
  return place === "cross" ? ["cross", "none"] : ["padding", "causal", "none"];
}
