"""The book's two corpora: ``"grammar"``, English-like sentences from a seeded grammar written for this book
(so its licence is ours), and ``"english"``, real English prose from CPython's documentation and docstrings.

The grammar has regularities a masked language model can learn from context: number agreement
("the cat sleeps", "two cats sleep"), tense set by a time word ("yesterday ... slept", "tomorrow ... will
sleep"), verbs that take only some subjects and objects (people read books, animals do not), and places
that suit their subjects (a baker in the kitchen, a fox in the forest). ``scripts/make_corpus.py`` writes
``geron_lib/pretraining/data/corpus.txt`` with :func:`generate`; the tests check that the file is exactly its
output.

The English corpus (``data/english.txt``, one paragraph a line) is the prose that CPython ships under the
PSF License Version 2, extracted once by ``scripts/make_english_corpus.py`` with the Python named in
:data:`CORPUS_PYTHON`; ``data/README.md`` says how, and the tests check the file's recorded sha256.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

from ..validate import check_choice, check_int, check_type

#: The committed corpus, one sentence a line.
CORPUS_PATH = Path(__file__).parent / "data" / "corpus.txt"
#: The arguments that made it.
CORPUS_SENTENCES, CORPUS_SEED = 6000, 2019
#: The English corpus, one paragraph a line; the PSF licence it is under; the Python that made it.
ENGLISH_PATH = Path(__file__).parent / "data" / "english.txt"
PSF_LICENSE_PATH = Path(__file__).parent / "data" / "PSF-LICENSE.txt"
CORPUS_PYTHON = "3.11.7"
#: The large English corpus: Python 3.11's documentation sources, one paragraph a line with its section and
#: document (``section<TAB>document<TAB>paragraph``, gzip); the Debian package version they came from.
DOCS_PATH = Path(__file__).parent / "data" / "python_docs.tsv.gz"
DOCS_PACKAGE = "python3.11-doc 3.11.2-6+deb12u9"
#: The corpora :func:`load` knows, by name.
CORPORA = {"grammar": CORPUS_PATH, "english": ENGLISH_PATH, "docs": DOCS_PATH}

# singular, plural; and the places each kind of noun is found in
NOUNS = {
    "animal": [("cat", "cats"), ("dog", "dogs"), ("bird", "birds"), ("fox", "foxes"), ("horse", "horses"),
               ("mouse", "mice"), ("rabbit", "rabbits"), ("owl", "owls"), ("goat", "goats")],
    "person": [("farmer", "farmers"), ("teacher", "teachers"), ("child", "children"), ("baker", "bakers"),
               ("doctor", "doctors"), ("sailor", "sailors"), ("painter", "painters"),
               ("student", "students")],
    "food": [("apple", "apples"), ("cake", "cakes"), ("carrot", "carrots"), ("egg", "eggs"),
             ("berry", "berries"), ("loaf", "loaves"), ("pear", "pears")],
    "thing": [("ball", "balls"), ("book", "books"), ("box", "boxes"), ("lamp", "lamps"), ("cup", "cups"),
              ("key", "keys"), ("hat", "hats"), ("letter", "letters"), ("basket", "baskets")],
}
PLACES = {
    "farmer": ["field", "market", "barn"], "teacher": ["school", "library"], "child": ["garden", "school"],
    "baker": ["kitchen", "market"], "doctor": ["village", "hospital"], "sailor": ["harbour", "boat"],
    "painter": ["garden", "village"], "student": ["library", "school"],
    "cat": ["garden", "kitchen"], "dog": ["garden", "field"], "bird": ["forest", "garden"],
    "fox": ["forest", "field"], "horse": ["field", "barn"], "mouse": ["kitchen", "barn"],
    "rabbit": ["field", "forest"], "owl": ["forest", "barn"], "goat": ["field", "barn"],
}
ADJECTIVES = {
    "animal": ["small", "big", "old", "young", "brown", "white", "hungry", "sleepy"],
    "person": ["young", "old", "tall", "happy", "tired", "busy"],
    "food": ["fresh", "sweet", "warm", "ripe", "small", "big"],
    "thing": ["red", "blue", "green", "yellow", "old", "new", "small", "heavy"],
}
# present 3rd singular, base (present plural, after "will"), past; the kinds of subject and object
TRANSITIVE = [
    (("eats", "eat", "ate"), ("animal", "person"), ("food",)),
    (("reads", "read", "read"), ("person",), ("book", "letter")),
    (("writes", "write", "wrote"), ("person",), ("letter", "book")),
    (("carries", "carry", "carried"), ("person",), ("food", "thing")),
    (("sees", "see", "saw"), ("animal", "person"), ("animal", "person", "thing")),
    (("chases", "chase", "chased"), ("animal",), ("animal",)),
    (("finds", "find", "found"), ("animal", "person"), ("food", "thing")),
    (("likes", "like", "liked"), ("animal", "person"), ("animal", "person", "food")),
    (("paints", "paint", "painted"), ("person",), ("thing", "animal")),
]
INTRANSITIVE = [
    (("sleeps", "sleep", "slept"), ("animal", "person")),
    (("runs", "run", "ran"), ("animal", "person")),
    (("sings", "sing", "sang"), ("person",)),
    (("waits", "wait", "waited"), ("animal", "person")),
    (("works", "work", "worked"), ("person",)),
    (("plays", "play", "played"), ("animal", "person")),
]
# a time word fixes the tense: present, past or future ("will" + base)
TIMES = [("", "present"), ("every day ,", "present"), ("often", "present"), ("yesterday", "past"),
         ("last night", "past"), ("tomorrow", "future"), ("soon", "future")]
PLURAL_DETERMINERS = ["the", "two", "three", "many", "some"]


class _Grammar:
    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def pick(self, options):
        return options[self.rng.integers(len(options))]

    def noun_phrase(self, kinds, *, plural=None, restrict=None):
        """(words, kind, singular noun, plural?) for a noun of one of ``kinds``."""
        kind = self.pick(kinds)
        nouns = [n for n in NOUNS[kind] if restrict is None or n[0] in restrict]
        singular, plural_form = self.pick(nouns)
        plural = bool(self.rng.random() < 0.35) if plural is None else plural
        words = [self.pick(PLURAL_DETERMINERS) if plural else self.pick(["the", "the", "a"])]
        if self.rng.random() < 0.4:
            words.append(self.pick(ADJECTIVES[kind]))
        words.append(plural_form if plural else singular)
        return words, kind, singular, plural

    def verb(self, forms, tense, plural):
        third, base, past = forms
        return {"present": [base if plural else third], "past": [past], "future": ["will", base]}[tense]

    def place(self, singular):
        return ["in", "the", self.pick(PLACES[singular])] if singular in PLACES else []

    def sentence(self) -> str:
        time, tense = self.pick(TIMES)
        r = self.rng.random()
        if r < 0.15:  # "the cats are sleepy ."
            subject, kind, _, plural = self.noun_phrase(["animal", "person", "food", "thing"])
            be = {"present": ["are" if plural else "is"], "past": ["were" if plural else "was"],
                  "future": ["will", "be"]}[tense]
            words = [*subject, *be, self.pick(ADJECTIVES[kind])]
        elif r < 0.45:  # "yesterday the old fox slept in the forest ."
            forms, subjects = self.pick(INTRANSITIVE)
            subject, _, singular, plural = self.noun_phrase(subjects)
            words = [*subject, *self.verb(forms, tense, plural), *self.place(singular)]
        else:  # "the baker carries two red baskets ." (and a relative clause or a place now and then)
            forms, subjects, objects = self.pick(TRANSITIVE)
            subject, _, singular, plural = self.noun_phrase(subjects)
            kinds = [k for k in objects if k in NOUNS] or ["thing"]
            restrict = [o for o in objects if o not in NOUNS] or None
            obj, _, _, _ = self.noun_phrase(kinds, restrict=restrict)
            words = [*subject, *self.verb(forms, tense, plural), *obj]
            if self.rng.random() < 0.3:
                words += self.place(singular)
        return " ".join([time, *words, "."]).strip()


def generate(n_sentences: int, seed: int) -> list[str]:
    """``n_sentences`` distinct sentences from the grammar, drawn with ``np.random.default_rng(seed)``
    (a sentence drawn again is skipped, so no held-out sentence can also be a training sentence)."""
    n_sentences = check_int("n_sentences", n_sentences, minimum=1)
    if n_sentences > 50_000:
        raise ValueError(f"n_sentences must be at most 50,000 (the grammar's variety), got {n_sentences}")
    grammar = _Grammar(np.random.default_rng(check_int("seed", seed, minimum=0)))
    sentences = {}
    while len(sentences) < n_sentences:
        sentences.setdefault(grammar.sentence(), None)
    return list(sentences)


def load(name: str = "grammar") -> list[str]:
    """A committed corpus, one line per list item: ``"grammar"`` (``data/corpus.txt``, a sentence a line),
    ``"english"`` (``data/english.txt``, a paragraph a line) or ``"docs"`` (the paragraphs of
    :func:`docs_paragraphs`)."""
    if check_choice("name", name, tuple(CORPORA)) == "docs":
        return [p for _, _, p in docs_paragraphs()]
    return CORPORA[name].read_text(encoding="utf-8").splitlines()


def docs_paragraphs() -> list[tuple[str, str, str]]:
    """(section, document, paragraph) of every paragraph of the documentation corpus (``data/
    python_docs.tsv.gz``, from ``scripts/make_docs_corpus.py``), in the documentation's path order: the
    section is its top folder ("tutorial", "library", "reference", "howto", "c-api", "whatsnew", ...)."""
    with gzip.open(DOCS_PATH, "rt", encoding="utf-8") as f:
        return [tuple(line.split("\t")) for line in f.read().splitlines()]


def split(sentences: list[str], n_held_out: int, *, seed: int = 0) -> tuple[list[str], list[str]]:
    """(training, held-out) sentences: ``n_held_out`` drawn at random (seeded), the rest in corpus order."""
    check_type("sentences", sentences, list)
    if not sentences:
        raise ValueError("sentences is empty: give at least two sentences to split")
    n_held_out = check_int("n_held_out", n_held_out, minimum=1)
    if n_held_out >= len(sentences):
        raise ValueError(f"n_held_out ({n_held_out}) must be below the number of sentences "
                         f"({len(sentences)})")
    order = np.random.default_rng(check_int("seed", seed, minimum=0)).permutation(len(sentences))
    held = np.zeros(len(sentences), bool)
    held[order[:n_held_out]] = True
    return ([s for s, h in zip(sentences, held, strict=True) if not h],
            [s for s, h in zip(sentences, held, strict=True) if h])
