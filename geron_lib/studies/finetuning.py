"""Downstream accuracy of the trade-off grid's miniatures, as the ALBERT paper reports it: each pretrained
encoder fine-tuned, with one budget for all, on two sentence-level classification tasks built from the
held-out paragraphs that neither the tokenizer nor pretraining saw (``Data.task_paragraphs``).

- ``"order"``: ALBERT's sentence-order prediction. Two consecutive sentences of a paragraph, in order or
  swapped (:func:`~geron_lib.pretraining.sentence_pairs.sop_pairs`); two classes, balanced.
- ``"section"``: which part of Python's documentation a paragraph comes from (:data:`SECTIONS`, the rest
  "other"). The label is where the text came from, its folder in the documentation's sources, never
  anything read from the text.

The paragraphs are split once into the tasks' training and test paragraphs (seeded), so that no test
sentence was fine-tuned on; every model meets the same examples in the same order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from ..model.classifier import SequenceClassifier
from ..model.encoder import Encoder
from ..pretraining import corpus
from ..pretraining.sentence_pairs import encode_pairs, sop_pairs
from ..pretraining.tokenizer import Tokenizer
from ..pretraining.train import AdamW, clip_grad_norm, learning_rate
from ..validate import (
    check_int,
    check_number,
    check_positive_number,
    check_sequence,
    check_type,
    check_unit_interval,
    check_unmasked,
)
from .sentence_tasks import split_sentences

#: The documentation's sections the "section" task tells apart (its largest), the others pooled as "other".
SECTIONS = ("library", "whatsnew", "howto", "reference", "c-api", "tutorial", "other")
#: The tasks, by name.
TASKS = ("order", "section")


@dataclass(frozen=True)
class FineTuning:
    """One fine-tuning budget for every model: epochs over the task's training examples, batch size, peak
    learning rate and warm-up share (BERT's schedule), and the share of paragraphs held out for testing."""

    epochs: int = 4
    batch_size: int = 32
    lr: float = 1e-3
    warmup: float = 0.1
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    test_share: float = 0.3

    def __post_init__(self):
        checked = {name: check_int(name, getattr(self, name), minimum=1) for name in ("epochs", "batch_size")}
        checked |= {name: check_positive_number(name, getattr(self, name))
                    for name in ("lr", "max_grad_norm")}
        checked["warmup"] = check_unit_interval("warmup", self.warmup)
        if not 0 < check_number("test_share", self.test_share) < 1:
            raise ValueError(f"test_share must lie in (0, 1): both parts need examples, got "
                             f"{self.test_share}")
        checked["test_share"] = float(self.test_share)
        checked["weight_decay"] = check_unit_interval("weight_decay", self.weight_decay)  # as AdamW's
        for name, value in checked.items():  # numpy numbers stored as Python ones
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class Task:
    """A classification task's examples, (n, T) ids and token types and (n,) labels, for training and for
    testing; its class names."""

    name: str
    classes: tuple[str, ...]
    train: tuple[np.ndarray, np.ndarray, np.ndarray]
    test: tuple[np.ndarray, np.ndarray, np.ndarray]

    def majority_accuracy(self) -> float:
        """The test accuracy of always answering the training examples' most frequent class."""
        most = np.bincount(self.train[2], minlength=len(self.classes)).argmax()
        return float((self.test[2] == most).mean())


def section_label(section: str) -> int:
    """The "section" task's class of a documentation section (its index in :data:`SECTIONS`)."""
    check_type("section", section, str)
    return SECTIONS.index(section) if section in SECTIONS else SECTIONS.index("other")


def tasks(paragraph_ids, tokenizer, T: int, budget: FineTuning = FineTuning(), *, seed: int = 0
          ) -> dict[str, Task]:
    """Both tasks from the documentation corpus's paragraphs ``paragraph_ids`` (indices into
    :func:`~geron_lib.pretraining.corpus.docs_paragraphs`), encoded by ``tokenizer`` into rows of T."""
    check_type("tokenizer", tokenizer, Tokenizer)
    T = check_int("T", T, minimum=5)
    check_type("budget", budget, FineTuning)
    seed = check_int("seed", seed, minimum=0)
    ids = [check_int(f"paragraph_ids[{k}]", i, minimum=0)
           for k, i in enumerate(check_sequence("paragraph_ids", paragraph_ids, "paragraph indices"))]
    if len(ids) < 10 or len(set(ids)) < len(ids):
        raise ValueError("paragraph_ids must hold at least 10 distinct indices (a repeated one could be in "
                         "both parts)")
    paragraphs = corpus.docs_paragraphs()
    if max(ids) >= len(paragraphs):
        raise ValueError(f"paragraph_ids must be below {len(paragraphs)}, the paragraphs of the "
                         f"documentation corpus; got {max(ids)}")
    rng = np.random.default_rng(seed)
    is_test = np.zeros(len(ids), bool)
    is_test[rng.permutation(len(ids))[: round(budget.test_share * len(ids))]] = True
    out = {}
    for part, chosen in (("train", ~is_test), ("test", is_test)):
        picked = [paragraphs[i] for i, keep in zip(ids, chosen, strict=True) if keep]
        documents = [d for d in (split_sentences(p) for _, _, p in picked) if len(d) >= 2]
        if not documents:
            raise ValueError(f"the {part} paragraphs hold no paragraph of two or more sentences, so no "
                             "sentence pair: give more paragraph_ids")
        out.setdefault("order", {})[part] = encode_pairs(sop_pairs(documents, rng=rng), tokenizer, T)
        texts = [p for _, _, p in picked]
        labels = np.array([section_label(s) for s, _, _ in picked], dtype=np.int64)
        rows = tokenizer.encode_batch(texts, T)
        out.setdefault("section", {})[part] = (rows, np.zeros_like(rows), labels)
    return {"order": Task("order", ("in order", "swapped"), out["order"]["train"], out["order"]["test"]),
            "section": Task("section", SECTIONS, out["section"]["train"], out["section"]["test"])}


def accuracy(model: SequenceClassifier, examples, batch_size: int = 256) -> float:
    """The share of ``examples`` (ids, token types, labels) whose highest logit is their label."""
    return float(np.mean(correct(model, examples, batch_size)))


def correct(model: SequenceClassifier, examples, batch_size: int = 256) -> np.ndarray:
    """c_n = [argmax_k z_nk = y_n]: per example of ``examples`` (ids, token types, labels), 1 where the
    highest logit is its label, else 0."""
    check_type("model", model, SequenceClassifier)
    if not isinstance(examples, tuple | list) or len(examples) != 3:
        raise TypeError("examples must be (ids, token types, labels), as Task.train and Task.test hold")
    ids, types, labels = (check_unmasked(f"examples[{i}]", a) for i, a in enumerate(examples))
    if not all(isinstance(a, np.ndarray) for a in examples) or not len(ids) == len(types) == len(labels) > 0:
        raise ValueError("examples must be three numpy arrays of one non-zero length: (ids, token types, "
                         "labels)")
    batch_size = check_int("batch_size", batch_size, minimum=1)
    hits = []
    for start in range(0, len(ids), batch_size):
        rows = slice(start, start + batch_size)
        logits = model.logits(ids[rows], token_type_ids=types[rows],
                              attention_mask=(ids[rows] != 0).astype(np.int64))
        hits.append(logits.argmax(axis=1) == labels[rows])
    return np.concatenate(hits).astype(np.int8)


def finetune(encoder: Encoder, task: Task, budget: FineTuning = FineTuning(), *, seed: int = 0) -> dict:
    """theta <- AdamW(theta, clip(grad L), lr(t)) over ``budget.epochs`` of the task's training examples.

    A :class:`~geron_lib.model.classifier.SequenceClassifier` on a copy of ``encoder`` (new pooler and
    classifier from ``seed``, which also shuffles the batches), every weight trained; BLAS on one thread.
    Returns the test accuracy, the mean training loss of each epoch, and which test examples it got right
    (``correct``, 0 or 1 each, in the task's order).
    """
    check_type("encoder", encoder, Encoder)
    check_type("task", task, Task)
    check_type("budget", budget, FineTuning)
    seed = check_int("seed", seed, minimum=0)
    model = SequenceClassifier.from_encoder(encoder, len(task.classes), seed=seed)
    optimizer = AdamW(model.parameters(), weight_decay=budget.weight_decay)
    ids, types, labels = task.train
    rng = np.random.default_rng([seed, 3])
    total = budget.epochs * math.ceil(len(ids) / budget.batch_size)
    warmup, losses = round(budget.warmup * total), []
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(budget.epochs):
            order, epoch_losses = rng.permutation(len(ids)), []
            for start in range(0, len(ids), budget.batch_size):
                rows = order[start:start + budget.batch_size]
                loss, grads = model.loss_and_grads(ids[rows], labels[rows], token_type_ids=types[rows],
                                                   attention_mask=(ids[rows] != 0).astype(np.int64))
                clip_grad_norm(grads, budget.max_grad_norm)
                optimizer.step(grads, learning_rate(optimizer.t + 1, total, budget.lr, warmup))
                epoch_losses.append(loss)
            losses.append(float(np.mean(epoch_losses)))
        hits = correct(model, task.test)
        return {"accuracy": float(hits.mean()), "train_loss": losses, "correct": hits.tolist()}
