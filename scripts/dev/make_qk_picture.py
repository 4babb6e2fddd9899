#!/usr/bin/env python3
"""Writes tests/fixtures/qk/picture-tiny-ko-en.json: the query–key picture of a corpus of 1,800
Korean sources in the trained translator's own templates (training/tiny_ko_en/corpus.py, more
than 20,000 tokens), as headmap.corpus.qk_picture draws it — every head of the encoder's last
layer, the axes from every token, 60 sentences drawn. The front end's tests open it in the
explorer and in the widget; tests/python/test_corpus.py checks it is what the code writes today.

Needs the headmap wheel (scripts/build/wheel) installed in the Python that runs it:

    .venv-test/bin/python scripts/dev/make_qk_picture.py
"""

import pathlib
import random
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "qk" / "picture-tiny-ko-en.json"
MODEL = ROOT / "www" / "models" / "headmap-tiny-ko-en"
LAYER, HEAD, MAX_POINTS, SEED = 2, 1, 1200, 7


def corpus(n=1800, seed=SEED):
    """n Korean sources of the translator's templates, the seed sentence first."""
    sys.path.insert(0, str(ROOT / "training" / "tiny_ko_en"))
    from corpus import SEED_ANIMAL_KO, sample  # noqa: E402 (the training package, by path)

    rng = random.Random(seed)
    return [SEED_ANIMAL_KO] + [sample(rng)["source"] for _ in range(n - 1)]


def picture():
    import headmap
    import headmap.corpus

    model = headmap.load(MODEL, threads=1)
    return headmap.corpus.qk_picture(model, corpus(), LAYER, HEAD, max_points=MAX_POINTS, seed=SEED, progress=False)


def main():
    import headmap.corpus

    doc = picture()
    headmap.corpus.write_picture(doc, OUT)
    c = doc["corpus"]
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size} bytes): {c['texts']} texts, {c['queries']} tokens, "
          f"{len(doc['sentences'])} sentences drawn")


if __name__ == "__main__":
    main()
