"""Fine-tuning: the two tasks built from documentation paragraphs (split, labels, no test paragraph in
training), the majority baseline, and finetune itself on a tiny encoder (seeded, learns a task it can)."""

from collections import Counter

import numpy as np
import pytest

from geron_lib import EncoderConfig
from geron_lib.model.classifier import SequenceClassifier
from geron_lib.model.encoder import Encoder
from geron_lib.pretraining import corpus
from geron_lib.pretraining.sentence_pairs import IN_ORDER, SWAPPED
from geron_lib.pretraining.subword import WordPieceTokenizer
from geron_lib.studies.finetuning import SECTIONS, FineTuning, Task, accuracy, finetune, section_label, tasks
from geron_lib.studies.sentence_tasks import split_sentences

PARAGRAPHS = corpus.docs_paragraphs()
T = 128
TEST_SHARE = 0.3


@pytest.fixture(scope="module")
def tok():
    return WordPieceTokenizer.from_texts([p for _, _, p in PARAGRAPHS[:300]], 400)


@pytest.fixture(scope="module")
def chosen(tok):
    """Every 97th paragraph that fits a row whole (so that neither task cuts a text), each row distinct."""
    out, rows = [], set()
    for i in range(5, len(PARAGRAPHS), 97):
        row = tuple(tok.encode(PARAGRAPHS[i][2]))
        if len(row) <= T and row not in rows:
            out.append(i)
            rows.add(row)
    return out


@pytest.fixture(scope="module")
def built(tok, chosen):
    return tasks(chosen, tok, T, FineTuning(test_share=TEST_SHARE), seed=0)


def text_rows(tok, ids):
    """paragraph text -> its section row, as tokenizer.encode_batch writes it (padded to T)."""
    return {PARAGRAPHS[i][2]: tuple(tok.encode_batch([PARAGRAPHS[i][2]], T)[0]) for i in ids}


def section_split(tok, chosen, task):
    """(training texts, test texts) of the "section" task, read back from its rows."""
    by_row = {row: text for text, row in text_rows(tok, chosen).items()}
    return [[by_row[tuple(r)] for r in part[0]] for part in (task.train, task.test)]


def test_section_labels_by_hand():
    assert section_label("library") == 0 and section_label("tutorial") == 5
    for other in ("faq", "using", "distutils", "other"):
        assert section_label(other) == len(SECTIONS) - 1 and SECTIONS[-1] == "other"


def test_section_task_splits_the_paragraphs_once_with_their_sections(tok, chosen, built):
    task = built["section"]
    train, test = section_split(tok, chosen, task)
    texts = [PARAGRAPHS[i][2] for i in chosen]
    assert len(test) == round(TEST_SHARE * len(chosen)) and len(train) + len(test) == len(chosen)
    assert Counter(train) + Counter(test) == Counter(texts)  # every paragraph once, in one of the parts
    assert not set(train) & set(test)  # no test paragraph in training
    section_of = {PARAGRAPHS[i][2]: PARAGRAPHS[i][0] for i in chosen}
    for part, labels in ((train, task.train[2]), (test, task.test[2])):
        assert labels.tolist() == [section_label(section_of[t]) for t in part]
    for ids, types, _ in (task.train, task.test):
        assert ids.shape[1] == T and not types.any()
    assert task.classes == SECTIONS


def sentence_tokens(tok, text):
    return [tuple(tok.encode(s)[1:-1]) for s in split_sentences(text)]


def pair_sources(tok, texts, row):
    """[(text, label)]: every paragraph in which the row's two segments are consecutive sentences, and the
    label that order gives (in order, or swapped)."""
    seps = np.flatnonzero(row == tok.sep_id)
    a, b = tuple(row[1:seps[0]]), tuple(row[seps[0] + 1:seps[1]])
    found = []
    for text in texts:
        sentences = sentence_tokens(tok, text)
        for first, second in zip(sentences, sentences[1:], strict=False):
            if (a, b) == (first, second):
                found.append((text, IN_ORDER))
            if (a, b) == (second, first):
                found.append((text, SWAPPED))
    return found


def test_order_task_pairs_come_from_the_same_split(tok, chosen, built):
    train_texts, test_texts = section_split(tok, chosen, built["section"])
    task, n_pairs, swapped = built["order"], {}, 0
    for part, (ids, types, labels), own in (("train", task.train, train_texts),
                                            ("test", task.test, test_texts)):
        sources = Counter()
        for row, row_types, label in zip(ids, types, labels, strict=True):
            (text, expected), = pair_sources(tok, [PARAGRAPHS[i][2] for i in chosen], row)  # exactly one
            assert text in own, part  # a test pair comes from a test paragraph, a training pair from training
            assert label == expected
            n_real = int((row != 0).sum())
            first_sep = int(np.flatnonzero(row == tok.sep_id)[0])
            second = n_real - first_sep - 1  # B and its [SEP]
            assert row_types.tolist() == [0] * (first_sep + 1) + [1] * second + [0] * (T - n_real)
            sources[text] += 1
            swapped += label == SWAPPED
        # every consecutive pair of every paragraph of two or more sentences, once
        n_pairs[part] = sum(sources.values())
        n_sentences = {t: len(split_sentences(t)) for t in own}
        assert sources == Counter({t: n - 1 for t, n in n_sentences.items() if n >= 2})
    total = sum(n_pairs.values())
    assert min(n_pairs.values()) > 0 and total > 50
    assert abs(swapped / total - 0.5) <= 4 * np.sqrt(0.25 / total)  # SOP's coin, balanced within 4 sigma
    assert task.classes == ("in order", "swapped")


def test_tasks_are_seeded(tok, chosen, built):
    again = tasks(chosen, tok, T, FineTuning(test_share=TEST_SHARE), seed=0)
    other = tasks(chosen, tok, T, FineTuning(test_share=TEST_SHARE), seed=1)
    for name in ("order", "section"):
        for a, b in zip(built[name].train + built[name].test, again[name].train + again[name].test,
                        strict=True):
            np.testing.assert_array_equal(a, b)
    test_texts = [set(section_split(tok, chosen, t["section"])[1]) for t in (built, other)]
    assert test_texts[0] != test_texts[1]


def test_majority_accuracy_by_hand():
    def examples(labels):
        n = len(labels)
        return np.ones((n, 4), np.int64), np.zeros((n, 4), np.int64), np.array(labels)

    task = Task("t", ("a", "b", "c"), examples([0, 1, 1, 2, 1, 0]), examples([1, 0, 2, 0, 0, 2, 1, 0]))
    assert task.majority_accuracy() == 2 / 8  # class 1, the training majority (not the test's, 0): 2 of 8
    task = Task("t", ("a", "b", "c"), examples([2, 2, 0]), examples([0, 1, 0, 1]))
    assert task.majority_accuracy() == 0.0


def test_majority_accuracy_of_the_section_task(built):
    task = built["section"]
    most, _ = Counter(task.train[2].tolist()).most_common(1)[0]
    assert task.majority_accuracy() == pytest.approx(task.test[2].tolist().count(most) / len(task.test[2]))


# a task a tiny encoder can learn: is the first token after [CLS] the word 5?
VOCAB, ROW = 12, 6


def first_token_task(n_train: int, n_test: int, seed: int) -> Task:
    rng = np.random.default_rng(seed)

    def examples(n):
        ids = np.zeros((n, ROW), np.int64)
        ids[:, 0] = 1
        ids[:, 1] = np.where(np.arange(n) % 2 == 0, 5, rng.integers(6, VOCAB, n))  # half the rows: 5
        ids[:, 2:4] = rng.integers(5, VOCAB, (n, 2))
        ids[:, 4] = 2
        ids[n // 3:, 3:] = np.array([2, 0, 0])  # some rows shorter, padded
        order = rng.permutation(n)
        ids = ids[order]
        return ids, np.zeros_like(ids), (ids[:, 1] == 5).astype(np.int64)

    return Task("first", ("other", "five"), examples(n_train), examples(n_test))


def tiny_encoder(seed: int = 0) -> Encoder:
    config = EncoderConfig(vocab_size=VOCAB, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                           intermediate_size=16, max_position_embeddings=ROW, type_vocab_size=2)
    return Encoder(config, seed=seed)


def test_finetune_learns_a_learnable_task_and_leaves_the_encoder_alone():
    encoder, task = tiny_encoder(), first_token_task(64, 40, seed=1)
    before = {name: p.copy() for name, p in encoder.parameters().items()}
    result = finetune(encoder, task, FineTuning(epochs=40, batch_size=16, lr=1e-2), seed=0)
    losses = result["train_loss"]
    assert len(losses) == 40 and all(np.isfinite(losses))
    assert losses[0] > 0.5 and losses[-1] < 0.25 * losses[0]  # from about log 2 to well below it
    assert result["accuracy"] >= 0.9 > task.majority_accuracy() + 0.3
    for name, p in encoder.parameters().items():
        np.testing.assert_array_equal(p, before[name], err_msg=name)


def test_finetune_is_seeded():
    encoder, task = tiny_encoder(), first_token_task(24, 10, seed=2)
    budget = FineTuning(epochs=2, batch_size=8)
    first, second = (finetune(encoder, task, budget, seed=3) for _ in range(2))
    assert first == second
    assert 0 <= first["accuracy"] <= 1 and len(first["train_loss"]) == 2
    assert finetune(encoder, task, budget, seed=4)["train_loss"] != first["train_loss"]


def test_accuracy_counts_the_highest_logit_over_batches():
    model = SequenceClassifier(tiny_encoder(), 2, seed=5)
    ids, types, labels = first_token_task(10, 1, seed=3).train
    mask = (ids != 0).astype(np.int64)
    predicted = model.logits(ids, token_type_ids=types, attention_mask=mask).argmax(axis=1)
    for flip in (np.zeros(10, bool), np.arange(10) < 3):  # all right, then 3 of 10 wrong
        assert accuracy(model, (ids, types, np.where(flip, 1 - predicted, predicted)), batch_size=3) == \
            1 - flip.mean()


@pytest.mark.parametrize("field, value, error, match", [
    ("epochs", 0, ValueError, "epochs must be at least 1"),
    ("epochs", 1.5, TypeError, "epochs must be an integer"),
    ("batch_size", 0, ValueError, "batch_size must be at least 1"),
    ("lr", 0.0, ValueError, "lr"),
    ("lr", -1e-3, ValueError, "lr"),
    ("warmup", 1.0, ValueError, r"warmup must lie in \[0, 1\)"),
    ("warmup", -0.1, ValueError, r"warmup must lie in \[0, 1\)"),
    ("test_share", 0.0, ValueError, r"test_share must lie in \(0, 1\)"),
    ("test_share", 1.0, ValueError, r"test_share must lie in \(0, 1\)"),
    ("weight_decay", -0.01, ValueError, r"weight_decay must lie in \[0, 1\)"),
    ("max_grad_norm", 0.0, ValueError, "max_grad_norm"),
    ("lr", "fast", TypeError, "lr"),
])
def test_bad_budgets_are_refused(field, value, error, match):
    with pytest.raises(error, match=match):
        FineTuning(**{field: value})


def test_bad_task_arguments_are_refused(tok, chosen):
    with pytest.raises(ValueError, match="at least 10 distinct indices"):
        tasks(chosen[:9], tok, T)
    with pytest.raises(ValueError, match="at least 10 distinct indices"):
        tasks(chosen[:9] + chosen[:1], tok, T)  # a repeated paragraph could land in both parts
    with pytest.raises(ValueError, match=f"below {len(PARAGRAPHS)}"):
        tasks(chosen[:10] + [len(PARAGRAPHS)], tok, T)
    with pytest.raises(ValueError, match=r"paragraph_ids\[2\] must be at least 0"):
        tasks([3, 4, -1] + chosen[:10], tok, T)
    with pytest.raises(TypeError, match="budget must be a FineTuning"):
        tasks(chosen, tok, T, {"epochs": 1})
    single = [i for i in chosen if len(split_sentences(PARAGRAPHS[i][2])) < 2][:12]
    with pytest.raises(ValueError, match="the train paragraphs hold no paragraph of two or more sentences"):
        tasks(single, tok, T)
    with pytest.raises(TypeError, match="task must be a Task"):
        finetune(tiny_encoder(), "order")
    with pytest.raises(TypeError, match="encoder must be an Encoder"):
        finetune(None, first_token_task(4, 2, seed=0))
