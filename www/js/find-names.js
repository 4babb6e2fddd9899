// The names of what "find heads" computes, as the core spells them: a link, an attribute and a
// menu check against these without loading the views that draw them.

/** The scores the core gives per head, in the order the menus list them. */
export const SCORES = ["previous_token", "duplicate_token", "induction", "next_token", "current_token", "first_token", "special", "punctuation", "broad", "distance"];

/** Scores that compare positions in one sentence: cross-attention has none of them. */
export const POSITIONAL = new Set(["previous_token", "duplicate_token", "induction", "next_token", "current_token", "distance"]);

/** How rollout fuses a layer's heads. */
export const FUSIONS = ["mean", "max", "min"];
