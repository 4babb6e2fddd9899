"""Tokens in: checked, given a kind each (what the widget greys out or joins), and optionally
prettified the way BertViz does."""

from __future__ import annotations

# Tokens a tokenizer adds around the text, as transformers' common models spell them.
SPECIAL_TOKENS = frozenset({
    "[CLS]", "[SEP]", "[PAD]", "[MASK]",
    "<s>", "</s>", "<pad>", "<mask>", "<bos>", "<eos>",
    "<|endoftext|>", "<|begin_of_text|>", "<|end_of_text|>",
})
UNKNOWN_TOKENS = frozenset({"[UNK]", "<unk>", "<UNK>"})


def check_tokens(tokens, what: str) -> list[str]:
    """A list of str, or a clear error. A bare string is refused: it would be read as letters."""
    if isinstance(tokens, (str, bytes)):
        raise TypeError(f"{what} is a single string; expected a list of tokens, e.g. tokenizer.convert_ids_to_tokens(ids)")
    try:
        tokens = list(tokens)
    except TypeError:
        raise TypeError(f"{what} is {type(tokens).__name__}, expected a list of str") from None
    if not tokens:
        raise ValueError(f"{what} is empty: a figure needs at least one token")
    for i, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TypeError(f"{what}[{i}] is {type(token).__name__} ({token!r}), expected str")
    return tokens


def kinds(tokens: list[str], special_tokens=None) -> list[str]:
    """Each token's kind, read before prettifying: special, unknown, continuation (WordPiece's
    `##` pieces) or word. Without `special_tokens`, the list above and any short bracketed
    token (`[X]`, `<x>`) are special, as headmap's own reader guesses (src/import)."""
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens is a single string; expected a list of tokens, e.g. tokenizer.all_special_tokens")
    chosen = None if special_tokens is None else frozenset(special_tokens)

    def is_special(token: str) -> bool:
        if chosen is not None:
            return token in chosen
        return token in SPECIAL_TOKENS or (token not in UNKNOWN_TOKENS and _bracketed(token))

    out = []
    for token in tokens:
        if is_special(token):
            out.append("special")
        elif token in UNKNOWN_TOKENS:
            out.append("unknown")
        elif token.startswith("##") and len(token) > 2:
            out.append("continuation")
        else:
            out.append("word")
    return out


def _bracketed(token: str) -> bool:
    return (2 < len(token) <= 24 and not any(c.isspace() for c in token)
            and (token[0], token[-1]) in (("[", "]"), ("<", ">")))


def prettify(tokens: list[str]) -> list[str]:
    """BertViz's format_special_chars: byte-level BPE's `Ġ` and SentencePiece's `▁` become a
    space, and the `</w>` end-of-word marker goes. WordPiece's `##` stays, in BertViz and here:
    it is the only sign left that the piece continues a word."""
    return [t.replace("Ġ", " ").replace("▁", " ").replace("</w>", "") for t in tokens]
