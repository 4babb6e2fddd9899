// Colour maps for weights in [0, 1]. Viridis is the default: perceptually even and readable
// with the common colour-vision deficiencies and in greyscale.

/** Viridis at t = 0, 0.1, …, 1 (matplotlib's values, rounded to 8 bits). */
const VIRIDIS_STOPS = [
  [68, 1, 84], [72, 36, 117], [65, 68, 135], [53, 95, 141], [42, 120, 142], [33, 145, 140],
  [34, 168, 132], [68, 191, 112], [122, 209, 81], [189, 223, 38], [253, 231, 37],
];

/** A 256 × RGB lookup table, `Uint8ClampedArray` of length 768, interpolated between stops. */
export function makeLut(stops = VIRIDIS_STOPS) {
  const lut = new Uint8ClampedArray(256 * 3);
  const last = stops.length - 1;
  for (let i = 0; i < 256; i++) {
    const x = (i / 255) * last;
    const k = Math.min(Math.floor(x), last - 1);
    const f = x - k;
    for (let c = 0; c < 3; c++) lut[i * 3 + c] = Math.round(stops[k][c] * (1 - f) + stops[k + 1][c] * f);
  }
  return lut;
}

export const VIRIDIS = makeLut();

/** Magma at t = 0, 0.1, …, 1 (matplotlib's, rounded): dark purple to pale yellow. */
const MAGMA_STOPS = [
  [0, 0, 4], [20, 14, 54], [59, 15, 112], [100, 26, 128], [140, 41, 129], [183, 55, 121],
  [222, 73, 104], [247, 112, 92], [254, 159, 109], [254, 207, 146], [252, 253, 191],
];

/** ColorBrewer's sequential Blues, light to dark: for print and for pages with a light palette. */
const BLUES_STOPS = [
  [247, 251, 255], [222, 235, 247], [198, 219, 239], [158, 202, 225], [107, 174, 214],
  [66, 146, 198], [33, 113, 181], [8, 81, 156], [8, 48, 107],
];

/** The colour maps a page or widget can name. */
export const COLORMAPS = { viridis: VIRIDIS, magma: makeLut(MAGMA_STOPS), blues: makeLut(BLUES_STOPS) };

/** The LUT of colour map `name`, viridis for a name it does not know. */
export function lutFor(name) {
  return COLORMAPS[name] ?? VIRIDIS;
}

/** The LUT index of `value` on the range [0, `max`]; values outside are clamped, NaN is 0. */
export function lutIndex(value, max = 1) {
  if (!(value > 0) || !(max > 0)) return 0;
  return Math.min(255, Math.round((value / max) * 255));
}

/** `[r, g, b]` for `value` on [0, `max`]. */
export function colorOf(value, max = 1, lut = VIRIDIS) {
  const i = lutIndex(value, max) * 3;
  return [lut[i], lut[i + 1], lut[i + 2]];
}

/** CSS colour string of `value` on [0, `max`]. */
export function cssColorOf(value, max = 1, lut = VIRIDIS) {
  const [r, g, b] = colorOf(value, max, lut);
  return `rgb(${r}, ${g}, ${b})`;
}

/** Relative luminance (0 dark … 1 light), to pick black or white text on a cell. */
export function luminance([r, g, b]) {
  const lin = (c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}
