"""The generated training text of headmap-tiny-induction: Korean and English sentences over a
small vocabulary, and sequences in which a span of words comes back.

Words are separated by spaces, Korean particles and the full stop included
("고양이 가 잔다 ."), so every word is one token of the word-level tokenizer and a head's
rows and columns read as words. English is lower case; the tokenizer lower-cases its input.

Three kinds of sequence, each starting with <bos> (the tokenizer adds it) and at most
MAX_TOKENS tokens long with it:

  repeat     r then r again: r is 4 to MAX_REPEAT different random words. The second half
             can only be predicted by finding the earlier occurrence of the current word and
             copying the word after it, which is what an induction head does.
  span       text in which a span of words, taken from earlier in the sequence, comes back
             later: mostly a whole sentence of a text of sentences, repeated after a sentence
             end; otherwise 2 to MAX_SPAN words of sentences or random words, put back anywhere.
  sentences  ordinary sentences, Korean and English, nothing repeated on purpose.

    /work/venv/bin/python training/tiny_induction/corpus.py     # prints a sample of each kind

Nothing here is random at import time; every generator takes a seeded random.Random.
"""

import random

MAX_TOKENS = 96   # the longest training sequence, <bos> included (the model has 128 positions)
MAX_REPEAT = 30   # the longest r in `repeat` sequences
MAX_SPAN = 12     # the longest repeated span in `span` sequences
MIX = [("repeat", 0.5), ("span", 0.35), ("sentences", 0.15)]
SENTENCE_SPANS = 0.6  # of the span sequences, the share that repeat a whole sentence

# --- the vocabulary ---

# Korean nouns by kind. Particles are chosen by the noun's final consonant (see particle).
KO_ANIMALS = ["고양이", "개", "새", "토끼", "말", "곰", "여우", "오리", "거북이", "호랑이", "사자", "물고기",
              "소", "돼지", "닭"]
KO_PEOPLE = ["민수", "영희", "철수", "지수", "수진", "준호", "아이", "학생", "선생님", "친구", "엄마", "아빠"]
KO_FOOD = ["사과", "빵", "밥", "물", "우유"]
KO_THINGS = ["책", "공", "꽃", "편지", "우산", "가방", "모자", "컵", "연필", "의자", "창문", "문", "시계",
             "그림", "노래"]
KO_PLACES = ["집", "학교", "공원", "시장", "바다", "산", "강", "길", "다리", "숲", "도서관", "부엌"]
KO_PARTICLES = ["이", "가", "은", "는", "을", "를", "에", "에서", "와", "과", "도", "의", "에게"]
KO_INTRANSITIVE = ["잔다", "운다", "웃는다", "달린다", "논다", "걷는다", "쉰다", "노래한다", "춤춘다", "기다린다"]
# transitive verbs with the kinds of object they take
KO_TRANSITIVE = {"먹는다": "food", "마신다": "drink", "본다": "any", "좋아한다": "any", "읽는다": "read",
                 "만든다": "thing", "산다": "thing", "찾는다": "any", "그린다": "any", "연다": "open",
                 "닫는다": "open", "던진다": "throw", "가진다": "thing"}
KO_MOTION = ["간다", "온다"]
KO_ADJ_ANIMATE = ["배고프다", "피곤하다", "행복하다"]
KO_ADJ = ["크다", "작다", "예쁘다", "빠르다", "느리다", "조용하다", "시끄럽다", "따뜻하다", "차갑다", "좋다",
          "무겁다", "가볍다"]
KO_COLORS = ["빨간", "파란", "노란", "하얀", "검은", "초록"]
KO_TIME = ["오늘", "어제", "내일", "아침", "저녁"]
KO_DEGREE = ["아주", "너무", "정말"]
KO_MANNER = ["빨리", "천천히", "같이", "다시"]
KO_LINKS = ["그리고", "그래서", "하지만"]

EN_DETERMINERS = ["the", "a", "an", "this", "that", "my", "your", "his", "her"]
EN_ANIMALS = ["cat", "dog", "bird", "rabbit", "horse", "bear", "fox", "duck", "turtle", "tiger", "lion",
              "fish", "cow", "pig", "hen"]
EN_NAMES = ["minsu", "younghee", "tom", "anna", "ben", "mia"]
EN_PEOPLE = ["child", "student", "teacher", "friend", "mother", "father"]
EN_FOOD = ["apple", "bread", "rice", "water", "milk"]
EN_THINGS = ["book", "ball", "flower", "letter", "umbrella", "bag", "hat", "cup", "pencil", "chair",
             "window", "door", "clock", "picture", "song"]
EN_PLACES = ["house", "school", "park", "market", "sea", "mountain", "river", "street", "bridge", "forest",
             "library", "kitchen"]
EN_INTRANSITIVE = ["sleeps", "cries", "laughs", "runs", "plays", "walks", "rests", "sings", "dances", "waits"]
EN_TRANSITIVE = {"eats": "food", "drinks": "drink", "sees": "any", "likes": "any", "reads": "read",
                 "makes": "thing", "buys": "thing", "finds": "any", "draws": "any", "opens": "open",
                 "closes": "open", "throws": "throw", "has": "thing"}
EN_MOTION = ["goes", "comes"]
EN_ADJ_ANIMATE = ["hungry", "tired", "happy"]
EN_ADJ = ["big", "small", "pretty", "fast", "slow", "quiet", "loud", "warm", "cold", "good", "heavy", "light"]
EN_COLORS = ["red", "blue", "yellow", "white", "black", "green"]
EN_TIME = ["today", "yesterday", "tomorrow", "morning", "evening"]
EN_DEGREE = ["very", "too", "really"]
EN_MANNER = ["quickly", "slowly", "together", "again"]
EN_OTHER = ["is", "was", "to", "in", "at", "with", "and", "but", "so", "in the"]
PUNCTUATION = [".", ",", "?", "!"]

# which nouns each kind of object allows, by language
KO_OBJECTS = {"food": KO_FOOD[:3], "drink": KO_FOOD[3:], "read": ["책", "편지", "그림"],
              "open": ["문", "창문", "가방", "책", "우산"], "throw": ["공", "사과", "모자", "연필"],
              "thing": KO_THINGS + KO_FOOD, "any": KO_ANIMALS + KO_PEOPLE + KO_THINGS + KO_FOOD}
EN_OBJECTS = {"food": EN_FOOD[:3], "drink": EN_FOOD[3:], "read": ["book", "letter", "picture"],
              "open": ["door", "window", "bag", "book", "umbrella"], "throw": ["ball", "apple", "hat", "pencil"],
              "thing": EN_THINGS + EN_FOOD, "any": EN_ANIMALS + EN_PEOPLE + EN_THINGS + EN_FOOD}


def korean_words():
    return sorted(set(KO_ANIMALS + KO_PEOPLE + KO_FOOD + KO_THINGS + KO_PLACES + KO_PARTICLES + KO_INTRANSITIVE
                      + list(KO_TRANSITIVE) + KO_MOTION + KO_ADJ_ANIMATE + KO_ADJ + KO_COLORS + KO_TIME
                      + KO_DEGREE + KO_MANNER + KO_LINKS))


def english_words():
    words = (EN_DETERMINERS + EN_ANIMALS + EN_NAMES + EN_PEOPLE + EN_FOOD + EN_THINGS + EN_PLACES
             + EN_INTRANSITIVE + list(EN_TRANSITIVE) + EN_MOTION + EN_ADJ_ANIMATE + EN_ADJ + EN_COLORS
             + EN_TIME + EN_DEGREE + EN_MANNER + " ".join(EN_OTHER).split())
    return sorted(set(words))


def vocabulary():
    """Every word of the corpus, in a fixed order: Korean, English, then punctuation."""
    return korean_words() + english_words() + PUNCTUATION


def ordinary_words():
    """The words random sequences draw from: every word but punctuation."""
    return korean_words() + english_words()


# --- sentences ---

def has_final_consonant(word):
    """True when the last Hangul syllable ends in a consonant (받침): it picks 이/을/은/과."""
    code = ord(word[-1]) - 0xAC00
    return 0 <= code < 11172 and code % 28 != 0


def particle(word, kind):
    with_final, without = {"subject": ("이", "가"), "topic": ("은", "는"), "object": ("을", "를"),
                           "and": ("과", "와")}[kind]
    return with_final if has_final_consonant(word) else without


def korean_sentence(rng):
    """One Korean sentence as a list of words: 고양이 가 잔다 . / 민수 는 사과 를 먹는다 . …"""
    animate = KO_ANIMALS + KO_PEOPLE
    subject = rng.choice(animate)
    words = [rng.choice(KO_TIME)] if rng.random() < 0.2 else []
    shape = rng.randrange(7)
    case = "topic" if rng.random() < 0.35 else "subject"
    words += [subject, particle(subject, case)]
    if shape == 0:                                   # 고양이 가 잔다 .
        if rng.random() < 0.3:
            words.append(rng.choice(KO_MANNER))
        words.append(rng.choice(KO_INTRANSITIVE))
    elif shape in (1, 2):                            # 민수 가 사과 를 먹는다 .
        verb = rng.choice(list(KO_TRANSITIVE))
        obj = rng.choice(KO_OBJECTS[KO_TRANSITIVE[verb]])
        if rng.random() < 0.25:
            words.append(rng.choice(KO_COLORS))
        words += [obj, particle(obj, "object"), verb]
    elif shape == 3:                                 # 곰 은 아주 크다 .
        if rng.random() < 0.4:
            words.append(rng.choice(KO_DEGREE))
        words.append(rng.choice(KO_ADJ + KO_ADJ_ANIMATE))
    elif shape == 4:                                 # 영희 가 학교 에 간다 .
        words += [rng.choice(KO_PLACES), "에", rng.choice(KO_MOTION)]
    elif shape == 5:                                 # 개 가 공원 에서 논다 .
        words += [rng.choice(KO_PLACES), "에서", rng.choice(KO_INTRANSITIVE)]
    else:                                            # 토끼 는 여우 와 같이 달린다 .
        other = rng.choice([a for a in animate if a != subject])
        words[-2:] = [subject, particle(subject, "and"), other, particle(other, case)]
        if rng.random() < 0.5:
            words.append("같이")
        words.append(rng.choice(KO_INTRANSITIVE))
    words.append(".")
    return words


def english_noun(rng, nouns, names=()):
    """A noun with its determiner ('the cat', 'a cat', 'my cat'), or a bare name."""
    if names and rng.random() < 0.3:
        return [rng.choice(names)]
    noun = rng.choice(nouns)
    det = rng.choice(["the", "the", "the", "a", "this", "that", "my", "your", "his", "her"])
    if det == "a" and noun[0] in "aeiou":
        det = "an"
    return [det, noun]


def english_sentence(rng):
    """One English sentence as a list of words: the cat sleeps . / tom eats an apple . …"""
    subject = english_noun(rng, EN_ANIMALS + EN_PEOPLE, EN_NAMES)
    words = [rng.choice(EN_TIME), ","] if rng.random() < 0.15 else []
    words += subject
    shape = rng.randrange(7)
    if shape == 0:                                   # the cat sleeps .
        words.append(rng.choice(EN_INTRANSITIVE))
        if rng.random() < 0.3:
            words.append(rng.choice(EN_MANNER))
    elif shape in (1, 2):                            # tom eats an apple .
        verb = rng.choice(list(EN_TRANSITIVE))
        obj = english_noun(rng, EN_OBJECTS[EN_TRANSITIVE[verb]])
        if rng.random() < 0.25:
            obj = obj[:-1] + [rng.choice(EN_COLORS)] + obj[-1:]
            if obj[0] == "an":
                obj[0] = "a"
            elif obj[0] == "a" and obj[1][0] in "aeiou":
                obj[0] = "an"
        words += [verb] + obj
    elif shape == 3:                                 # the bear is very big .
        words.append(rng.choice(["is", "is", "was"]))
        if rng.random() < 0.4:
            words.append(rng.choice(EN_DEGREE))
        words.append(rng.choice(EN_ADJ + EN_ADJ_ANIMATE))
    elif shape == 4:                                 # anna goes to the school .
        words += [rng.choice(EN_MOTION), "to", "the", rng.choice(EN_PLACES)]
    elif shape == 5:                                 # the dog plays in the park .
        words += [rng.choice(EN_INTRANSITIVE), rng.choice(["in", "at"]), "the", rng.choice(EN_PLACES)]
    else:                                            # the rabbit runs with the fox .
        words += [rng.choice(EN_INTRANSITIVE), "with"] + english_noun(rng, EN_ANIMALS + EN_PEOPLE, EN_NAMES)
        if rng.random() < 0.3:
            words.append("together")
    words.append(rng.choice([".", ".", ".", ".", "!"]))
    return words


def sentence_list(rng, budget, cut=True):
    """Sentences, each a list of words, until the next would pass `budget` words in all. A
    first sentence longer than the budget is cut, or with cut=False left out (no sentences).
    Most sequences keep to one language; a quarter switch language sentence by sentence."""
    mixed = rng.random() < 0.25
    korean = rng.random() < 0.5
    out, used = [], 0
    while used < budget:
        lang_ko = (rng.random() < 0.5) if mixed else korean
        s = korean_sentence(rng) if lang_ko else english_sentence(rng)
        if lang_ko and out and rng.random() < 0.15:
            s = [rng.choice(KO_LINKS)] + s
        if (out or not cut) and used + len(s) > budget:
            break
        s = s[:budget - used]
        out.append(s)
        used += len(s)
    return out


def sentences(rng, budget, cut=True):
    """Sentences as one list of at most `budget` words (see sentence_list)."""
    return [w for s in sentence_list(rng, budget, cut) for w in s]


def random_words(rng, n, pool=None):
    """n different words drawn at random (with replacement when n is larger than the pool)."""
    pool = pool or ordinary_words()
    return rng.sample(pool, n) if n <= len(pool) else [rng.choice(pool) for _ in range(n)]


def filler(rng, n):
    """n words of sentences or of random words, half and half."""
    if n <= 0:
        return []
    return sentences(rng, n) if rng.random() < 0.5 else random_words(rng, n)


# --- whole sequences (as lists of words; the tokenizer adds <bos>) ---

def repeat_sequence(rng, length=None):
    """r r: `length` different random words, then the same words again."""
    n = length or rng.randint(4, MAX_REPEAT)
    r = random_words(rng, n)
    return {"kind": "repeat", "words": r + r, "first": 0, "second": n, "span": n}


def span_sequence(rng):
    """Text in which a span of words comes back (SENTENCE_SPANS of the time a whole sentence
    at a sentence boundary, as text repeats itself; otherwise 2 to MAX_SPAN words from
    anywhere, put back anywhere)."""
    if rng.random() < SENTENCE_SPANS:
        return sentence_span_sequence(rng)
    budget = MAX_TOKENS - 1
    k = rng.randint(2, MAX_SPAN)
    prefix = filler(rng, rng.randint(k, budget - 2 * k))
    while len(prefix) < k:  # sentences stop short of their budget when the next one is long
        prefix += random_words(rng, k - len(prefix))
    first = rng.randrange(len(prefix) - k + 1)
    span = prefix[first:first + k]
    middle = filler(rng, rng.randint(0, max(0, budget - len(prefix) - k)))
    words = prefix + middle
    second = len(words)
    words += span
    words += filler(rng, rng.randint(0, budget - len(words)))
    words = words[:budget]
    return {"kind": "span", "how": "anywhere", "words": words, "first": first, "second": second, "span": k}


def sentence_span_sequence(rng):
    """Sentences, one of which (at most MAX_SPAN words) comes back whole later, after a
    sentence end: 고양이 가 잔다 . 개 가 논다 . 고양이 가 잔다 . …"""
    budget = MAX_TOKENS - 1
    while True:
        before = sentence_list(rng, rng.randint(4, budget - MAX_SPAN))
        fits = [i for i, s in enumerate(before) if len(s) <= MAX_SPAN and s[-1] in PUNCTUATION]
        if fits:
            break
    i = rng.choice(fits)
    span = before[i]
    first = sum(len(s) for s in before[:i])
    words = [w for s in before for w in s]
    words += sentences(rng, rng.randint(0, budget - len(words) - len(span)), cut=False)
    second = len(words)
    words += span
    words += sentences(rng, budget - len(words)) if rng.random() < 0.7 else []
    return {"kind": "span", "how": "sentence", "words": words, "first": first, "second": second, "span": len(span)}


def sentence_sequence(rng):
    words = sentences(rng, rng.randint(8, MAX_TOKENS - 1))
    return {"kind": "sentences", "words": words}


MAKERS = {"repeat": repeat_sequence, "span": span_sequence, "sentences": sentence_sequence}


def sample(rng):
    kind = rng.choices([k for k, _ in MIX], weights=[w for _, w in MIX])[0]
    seq = MAKERS[kind](rng)
    seq["text"] = " ".join(seq["words"])
    return seq


def heldout(seed=7, n_per_kind=200):
    """Held-out sequences of each kind, from their own seed; train.py leaves out any training
    sequence whose text is one of these."""
    rng = random.Random(seed)
    out = []
    for kind, make in MAKERS.items():
        for _ in range(n_per_kind):
            seq = make(rng)
            seq["text"] = " ".join(seq["words"])
            out.append(seq)
    return out


if __name__ == "__main__":
    rng = random.Random(0)
    for make in MAKERS.values():
        for _ in range(2):
            print(" ".join(make(rng)["words"]))
        print()
    print(f"vocabulary: {len(vocabulary())} words ({len(korean_words())} Korean, {len(english_words())} English, "
          f"{len(PUNCTUATION)} punctuation)")
