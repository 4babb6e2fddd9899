// What is said above a figure, worded once for the explorer and the widget: a what-if, no
// scaling, decoder rows, and how much of the text the model read. Each host puts the notes
// where it shows them: the explorer in their own boxes, the widget in one line.

import { coverageNote } from "./coverage.js";

/**
 * The notes for `place` (the run's: { place, mask, whatIf, scale }) of a model described by
 * `info`, read with `tokens`; `model` names the model, `reads` is the key of what it reads (or
 * null), `script` whether to say a script is not covered. Each note is its text or null.
 */
export function figureNotes({ T, info, place, tokens, model, reads = null, script = true }) {
  const trained = info.places.find((p) => p.place === place.place).mask;
  return {
    whatIf: place.whatIf ? T(info.trained ? "whatIfNote" : "comparisonNote", { model, trained: T(`maskInline.${trained}`), mask: T(`maskInline.${place.mask}`) }) : null,
    scale: place.scale ? null : T("scaleOffNote"),
    // a trained decoder fed its target: a row predicts the next word
    decoder: info.trained && info.encoderDecoder && place.place !== "encoder_self" ? T("decoderRowsNote") : null,
    // how much of the text the model read; below enough, what it reads
    coverage: coverageNote(tokens, T, model, reads, script),
  };
}
