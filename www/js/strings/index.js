// The catalogue of words the widget and the explorer share, by language.

import { EN } from "./en.js";
import { KO } from "./ko.js";

export const STRINGS = { en: EN, ko: KO };
