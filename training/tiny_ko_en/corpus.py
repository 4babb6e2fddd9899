"""The generated Korean → English corpus of headmap-tiny-ko-en, with its word alignments.

Every example is built from templates over a small vocabulary around the seed articles'
sentences ("동물이 길을 건너지 않았다. 그것은 너무 피곤했다.", "민수가 영희에게 책을 주었다."):
people with genders, animals, objects and places; crossing, giving, seeing; being tired,
hungry, happy … Because the generator writes both sides, it knows which English word
translates which Korean word, and which noun a pronoun refers to. Those facts are what
evaluate.py measures attention against.

Two-sentence examples are the point of the corpus. The second sentence's subject is a pronoun
— 그것 (animal, thing or place), 그 (a man), 그녀 (a woman) — and the English names its
referent ("The animal was too tired."), so a correct translation needs the pronoun resolved.
The first sentence always holds other nouns too (distractors), and the antecedent is the only
noun that fits both the pronoun and the predicate: in the seed, 그것 could be 동물 or 길, but
only an animal can be tired.

    python3 training/tiny_ko_en/corpus.py      # prints a sample and the split sizes

Nothing here is random at import time; `build_splits()` is seeded and deterministic.
"""

import random
from dataclasses import dataclass, field

SEED_ANIMAL_KO = "동물이 길을 건너지 않았다. 그것은 너무 피곤했다."
SEED_ANIMAL_EN = "The animal did not cross the street. The animal was too tired."
SEED_GIVE_KO = "민수가 영희에게 책을 주었다."
SEED_GIVE_EN = "Minsu gave Younghee a book."
# No training source contains either seed's first sentence, so the seeds are new to the model
# as sentences, not only as whole inputs.
HELD_OUT_SENTENCES = ("동물이 길을 건너지 않았다.", "민수가 영희에게 책을 주었다.")

# --- the vocabulary: (Korean, English) ---

MEN = [("민수", "Minsu"), ("철수", "Cheolsu"), ("준호", "Junho"), ("지훈", "Jihun"),
       ("현우", "Hyunwoo"), ("동민", "Dongmin"), ("태호", "Taeho"), ("우진", "Woojin")]
WOMEN = [("영희", "Younghee"), ("지수", "Jisu"), ("수진", "Sujin"), ("민지", "Minji"),
         ("하나", "Hana"), ("서연", "Seoyeon"), ("유나", "Yuna"), ("은비", "Eunbi")]
ANIMALS = [("동물", "animal"), ("고양이", "cat"), ("개", "dog"), ("새", "bird"), ("토끼", "rabbit"),
           ("말", "horse"), ("곰", "bear"), ("여우", "fox"), ("오리", "duck"), ("거북이", "turtle")]
OBJECTS = [("책", "book"), ("공", "ball"), ("사과", "apple"), ("꽃", "flower"), ("편지", "letter"),
           ("우산", "umbrella"), ("가방", "bag"), ("모자", "hat"), ("컵", "cup"), ("연필", "pencil")]
PLACES = [("길", "street"), ("강", "river"), ("다리", "bridge")]

# Predicates of the second sentence, by what they can describe. The pronoun narrows the
# antecedent to a class (그것: animal, object or place); the predicate narrows it further.
ANIMATE_STATES = [("피곤했다", "tired"), ("배고팠다", "hungry"), ("행복했다", "happy"),
                  ("슬펐다", "sad"), ("졸렸다", "sleepy")]
OBJECT_STATES = [("무거웠다", "heavy"), ("컸다", "big"), ("작았다", "small"), ("낡았다", "old")]
PLACE_STATES = [("넓었다", "wide"), ("좁았다", "narrow"), ("위험했다", "dangerous")]
ADVERBS = [("너무", "too"), ("아주", "very"), ("정말", "really")]


@dataclass(frozen=True)
class Entity:
    ko: str
    en: str
    kind: str  # "man", "woman", "animal", "object", "place"

    @property
    def person(self):
        return self.kind in ("man", "woman")

    def english(self, start_of_sentence=False, indefinite=False):
        """How the English names it: a name as is, a noun with its article."""
        if self.person:
            return [self.en]
        if indefinite:
            article = "an" if self.en[0] in "aeiou" else "a"
        else:
            article = "The" if start_of_sentence else "the"
        return [article, self.en]


PEOPLE = [Entity(k, e, "man") for k, e in MEN] + [Entity(k, e, "woman") for k, e in WOMEN]
ANIMAL_ENTITIES = [Entity(k, e, "animal") for k, e in ANIMALS]
OBJECT_ENTITIES = [Entity(k, e, "object") for k, e in OBJECTS]
PLACE_ENTITIES = [Entity(k, e, "place") for k, e in PLACES]
ANIMATE = PEOPLE + ANIMAL_ENTITIES


def has_final_consonant(word):
    """True when the last Hangul syllable ends in a consonant (받침): it picks 이/을/은/과."""
    code = ord(word[-1]) - 0xAC00
    return 0 <= code < 11172 and code % 28 != 0


def particle(word, kind):
    with_final, without = {"subject": ("이", "가"), "topic": ("은", "는"), "object": ("을", "를"),
                           "and": ("과", "와"), "dative": ("에게", "에게")}[kind]
    return with_final if has_final_consonant(word) else without


# --- building one example with its spans ---

@dataclass
class Word:
    """One word of a sentence, with character offsets into the example's text."""
    text: str
    start: int
    end: int
    key: str = None          # what it stands for: an entity slot ("s1.A") or a role ("s1.verb")
    stem_end: int = None     # for nouns: where the stem ends (the particle follows)


@dataclass
class TextBuilder:
    """Appends words separated by spaces, with '.' glued to the word before it."""
    text: str = ""
    words: list = field(default_factory=list)

    def word(self, text, key=None, stem=None):
        if self.text:
            self.text += " "
        start = len(self.text)
        self.text += text
        stem_end = start + len(stem) if stem else None
        self.words.append(Word(text, start, len(self.text), key, stem_end))

    def stop(self):
        start = len(self.text)
        self.text += "."
        self.words.append(Word(".", start, start + 1, None))


@dataclass
class Sentence:
    """One sentence as (Korean word, key, stem) and (English word, key) lists; a key links an
    English word to the Korean word it translates."""
    ko: list
    en: list
    entities: dict  # key → Entity, for the nouns in this sentence


def noun(entity, case, key):
    p = particle(entity.ko, case)
    return (entity.ko + p, key, entity.ko)


def cross_sentence(rng, tag):
    """S가 P를 건넜다 / 건너지 않았다, with one or two subjects ('A와 B가')."""
    subjects = rng.sample(ANIMATE, 2) if rng.random() < 0.25 else [rng.choice(ANIMATE)]
    place = rng.choice(PLACE_ENTITIES)
    negated = rng.random() < 0.5
    case = rng.choice(["subject", "topic"])
    ko, en, entities = [], [], {}
    for i, s in enumerate(subjects):
        key = f"{tag}.S{i}"
        entities[key] = s
        last = i == len(subjects) - 1
        ko.append(noun(s, case if last else "and", key))
        words = s.english(start_of_sentence=i == 0)
        en += [(w, key if j == len(words) - 1 else None) for j, w in enumerate(words)]
        if not last:
            en.append(("and", None))
    entities[f"{tag}.P"] = place
    ko.append(noun(place, "object", f"{tag}.P"))
    if negated:
        ko += [("건너지", f"{tag}.verb", None), ("않았다", f"{tag}.not", None)]
        en += [("did", None), ("not", f"{tag}.not"), ("cross", f"{tag}.verb")]
    else:
        ko.append(("건넜다", f"{tag}.verb", None))
        en.append(("crossed", f"{tag}.verb"))
    en += [("the", None), (place.en, f"{tag}.P")]
    return Sentence(ko, en, entities)


def give_sentence(rng, tag):
    """A가 B에게 O를 주었다 / 주지 않았다 → 'A gave B an O.'"""
    giver = rng.choice(PEOPLE)
    receiver = rng.choice([e for e in ANIMATE if e != giver])
    thing = rng.choice(OBJECT_ENTITIES)
    negated = rng.random() < 0.3
    case = rng.choice(["subject", "topic"])
    ko = [noun(giver, case, f"{tag}.A"), noun(receiver, "dative", f"{tag}.B"), noun(thing, "object", f"{tag}.O")]
    if negated:
        ko += [("주지", f"{tag}.verb", None), ("않았다", f"{tag}.not", None)]
        verb = [("did", None), ("not", f"{tag}.not"), ("give", f"{tag}.verb")]
    else:
        ko.append(("주었다", f"{tag}.verb", None))
        verb = [("gave", f"{tag}.verb")]
    en = [(giver.en, f"{tag}.A")] + verb
    en += [(w, f"{tag}.B" if w == receiver.en else None) for w in receiver.english()]
    en += [(w, f"{tag}.O" if w == thing.en else None) for w in thing.english(indefinite=True)]
    return Sentence(ko, en, {f"{tag}.A": giver, f"{tag}.B": receiver, f"{tag}.O": thing})


def see_sentence(rng, tag):
    """A가 B를 보았다 → 'A saw B.'"""
    seer = rng.choice(ANIMATE)
    seen = rng.choice([e for e in ANIMATE + OBJECT_ENTITIES + PLACE_ENTITIES if e != seer])
    case = rng.choice(["subject", "topic"])
    ko = [noun(seer, case, f"{tag}.A"), noun(seen, "object", f"{tag}.B"), ("보았다", f"{tag}.verb", None)]
    en = [(w, f"{tag}.A" if w == seer.en else None) for w in seer.english(start_of_sentence=True)]
    en.append(("saw", f"{tag}.verb"))
    en += [(w, f"{tag}.B" if w == seen.en else None) for w in seen.english()]
    return Sentence(ko, en, {f"{tag}.A": seer, f"{tag}.B": seen})


FIRST_SENTENCES = [(cross_sentence, 0.35), (give_sentence, 0.45), (see_sentence, 0.2)]


def states_for(entity):
    if entity.person or entity.kind == "animal":
        return ANIMATE_STATES
    return OBJECT_STATES if entity.kind == "object" else PLACE_STATES


def pronoun_for(entity):
    return {"man": "그", "woman": "그녀"}.get(entity.kind, "그것")


def fits(entity, pronoun, states):
    return pronoun_for(entity) == pronoun and states_for(entity) is states


def state_sentence(rng, subject, tag, pronoun=None):
    """'그것은 너무 피곤했다.' (or with the noun itself) → 'The animal was too tired.'"""
    ko_subject = pronoun or subject.ko
    case = rng.choice(["topic", "topic", "subject"])  # the seed's 그것은 is the usual form
    adverb = rng.choice(ADVERBS)
    state = rng.choice(states_for(subject))
    ko = [(ko_subject + particle(ko_subject, case), f"{tag}.subj", ko_subject),
          (adverb[0], f"{tag}.adv", None), (state[0], f"{tag}.state", None)]
    words = subject.english(start_of_sentence=True)
    en = [(w, f"{tag}.subj" if w == subject.en else None) for w in words]
    en += [("was", None), (adverb[1], f"{tag}.adv"), (state[1], f"{tag}.state")]
    return Sentence(ko, en, {f"{tag}.subj": subject})


# --- whole examples ---

def assemble(sentences, kind, pronoun_key=None, antecedent_key=None):
    """Joins sentences into one example: texts, words with spans, and the alignment."""
    ko, en = TextBuilder(), TextBuilder()
    for s in sentences:
        for text, key, stem in s.ko:
            ko.word(text, key, stem)
        ko.stop()
        for text, key in s.en:
            en.word(text, key)
        en.stop()
    ko_index = {w.key: i for i, w in enumerate(ko.words) if w.key}
    align = [[i, ko_index[w.key]] for i, w in enumerate(en.words) if w.key]

    def span(w):
        return {"text": w.text, "start": w.start, "end": w.end}

    def noun_span(w):
        # a noun's stem (동물 in 동물이), so the tokenizer trainer can tell inflected words apart
        return span(w) | ({"stem": w.text[:w.stem_end - w.start]} if w.stem_end else {})

    example = {
        "kind": kind,
        "source": ko.text,
        "target": en.text,
        "source_words": [noun_span(w) for w in ko.words],
        "target_words": [span(w) for w in en.words],
        # [English word index, Korean word index]: which Korean word each English word translates
        "alignment": align,
    }
    if pronoun_key:
        p, a = ko.words[ko_index[pronoun_key]], ko.words[ko_index[antecedent_key]]
        # character spans of the stems only: 그것 (not 그것은) → 동물 (not 동물이)
        example["pronoun"] = {"text": ko.text[p.start:p.stem_end], "start": p.start, "end": p.stem_end}
        example["antecedent"] = {"text": ko.text[a.start:a.stem_end], "start": a.start, "end": a.stem_end}
    return example


def pick_first(rng):
    make = rng.choices([f for f, _ in FIRST_SENTENCES], weights=[w for _, w in FIRST_SENTENCES])[0]
    return make(rng, "s1")


def pronoun_example(rng):
    """Sentence 1, then a pronoun sentence whose referent is the only noun that fits."""
    while True:
        first = pick_first(rng)
        choices = []
        for key, e in first.entities.items():
            pronoun, states = pronoun_for(e), states_for(e)
            if sum(fits(o, pronoun, states) for o in first.entities.values()) == 1:
                choices.append(key)
        if choices:
            break
    key = rng.choice(choices)
    subject = first.entities[key]
    second = state_sentence(rng, subject, "s2", pronoun=pronoun_for(subject))
    return assemble([first, second], "pronoun", pronoun_key="s2.subj", antecedent_key=key)


def single_example(rng):
    return assemble([pick_first(rng)], "single")


def noun_state_example(rng):
    """A state sentence with the noun itself, alone or after a first sentence: teaches the
    predicates without needing a pronoun resolved."""
    subject = rng.choice(ANIMATE + OBJECT_ENTITIES + PLACE_ENTITIES)
    if rng.random() < 0.5:
        return assemble([state_sentence(rng, subject, "s1")], "state")
    return assemble([pick_first(rng), state_sentence(rng, subject, "s2")], "two_nouns")


MIX = [(pronoun_example, 0.6), (single_example, 0.25), (noun_state_example, 0.15)]


def sample(rng):
    make = rng.choices([f for f, _ in MIX], weights=[w for _, w in MIX])[0]
    return make(rng)


def contains_held_out(source):
    return any(s in source for s in HELD_OUT_SENTENCES)


def seed_examples():
    """The two seed sentences, built by the same templates (so they carry spans and alignment)."""
    animal, street = ANIMAL_ENTITIES[0], PLACE_ENTITIES[0]
    first = Sentence(
        [noun(animal, "subject", "s1.S0"), noun(street, "object", "s1.P"),
         ("건너지", "s1.verb", None), ("않았다", "s1.not", None)],
        [("The", None), ("animal", "s1.S0"), ("did", None), ("not", "s1.not"), ("cross", "s1.verb"),
         ("the", None), ("street", "s1.P")],
        {"s1.S0": animal, "s1.P": street})
    second = Sentence([("그것은", "s2.subj", "그것"), ("너무", "s2.adv", None), ("피곤했다", "s2.state", None)],
                      [("The", None), ("animal", "s2.subj"), ("was", None), ("too", "s2.adv"), ("tired", "s2.state")],
                      {"s2.subj": animal})
    minsu, younghee, book = PEOPLE[0], PEOPLE[8], OBJECT_ENTITIES[0]
    give = Sentence(
        [noun(minsu, "subject", "s1.A"), noun(younghee, "dative", "s1.B"), noun(book, "object", "s1.O"),
         ("주었다", "s1.verb", None)],
        [("Minsu", "s1.A"), ("gave", "s1.verb"), ("Younghee", "s1.B"), ("a", None), ("book", "s1.O")],
        {"s1.A": minsu, "s1.B": younghee, "s1.O": book})
    seeds = [assemble([first, second], "pronoun", "s2.subj", "s1.S0") | {"seed": True},
             assemble([give], "single") | {"seed": True}]
    assert [s["source"] for s in seeds] == [SEED_ANIMAL_KO, SEED_GIVE_KO], seeds
    assert [s["target"] for s in seeds] == [SEED_ANIMAL_EN, SEED_GIVE_EN], seeds
    return seeds


def build_splits(n_train=60000, n_heldout_pronoun=300, n_heldout_other=100, seed=20240601):
    """Training and held-out examples, disjoint by source text. The held-out set starts with
    the two seeds; no training source contains a seed sentence."""
    rng = random.Random(seed)
    heldout = seed_examples()
    taken = {e["source"] for e in heldout}
    quotas = {"pronoun": n_heldout_pronoun, "other": n_heldout_other}
    while quotas["pronoun"] or quotas["other"]:
        e = sample(rng)
        group = "pronoun" if e["kind"] == "pronoun" else "other"
        if quotas[group] and e["source"] not in taken and not contains_held_out(e["source"]):
            taken.add(e["source"])
            heldout.append(e)
            quotas[group] -= 1
    train, seen = [], set(taken)
    while len(train) < n_train:
        e = sample(rng)
        if e["source"] in seen or contains_held_out(e["source"]):
            continue
        seen.add(e["source"])
        train.append(e)
    return train, heldout


if __name__ == "__main__":
    train, heldout = build_splits()
    for e in train[:8] + heldout[:2]:
        print(e["source"], "→", e["target"])
    kinds = {}
    for e in train:
        kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
    print(f"{len(train)} training examples {kinds}, {len(heldout)} held out")
