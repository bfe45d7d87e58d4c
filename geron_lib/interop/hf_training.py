"""Pretraining a geron_lib model the transformers way: a tokenizer over a
:class:`~geron_lib.pretraining.tokenizer.WordTokenizer`'s vocabulary, the dynamic masking of
``DataCollatorForLanguageModeling``, and a ``Trainer`` running chapter 4's loop.

Needs torch, transformers and accelerate (the ``hf`` extra); each function imports them when called, so
that :func:`masking_counts` (numpy only) works without them. Nothing is downloaded.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable

import numpy as np

from ..model.mlm import MaskedBatch
from ..validate import check_int, check_open_unit, check_positive_number, check_type, plain_array

#: A WordTokenizer's special tokens, by the keyword transformers' tokenizers give them.
_ROLES = {"pad_token": "pad_id", "cls_token": "cls_id", "sep_token": "sep_id", "mask_token": "mask_id",
          "unk_token": "unk_id"}


def _check_word_tokenizer(tokenizer) -> None:
    """A tokenizer with a vocabulary and the special ids, as :func:`hf_tokenizer` reads it."""
    missing = [a for a in ("vocabulary", *_ROLES.values()) if not hasattr(tokenizer, a)]
    if missing:
        raise TypeError(f"tokenizer must be a WordTokenizer (vocabulary and the special ids), got "
                        f"{type(tokenizer).__name__} without {', '.join(missing)}")


def hf_tokenizer(tokenizer):
    """ids(text) = [CLS] words [SEP], as ``WordTokenizer.encode``.

    The same vocabulary in transformers: a ``PreTrainedTokenizerFast`` over a
    ``tokenizers`` WordLevel model of ``tokenizer.vocabulary``, with the same
    ids and the same five special tokens, lower-casing and splitting text
    into words and single marks as
    :func:`~geron_lib.pretraining.tokenizer.split_words` does (a special
    token typed in a text is text). ``tokenizer`` is a WordTokenizer
    (anything with ``vocabulary`` and ``pad_id``, ``cls_id``, ``sep_id``,
    ``mask_id``, ``unk_id``).
    """
    from tokenizers import (
        Regex,
        Tokenizer,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )
    from transformers import PreTrainedTokenizerFast

    _check_word_tokenizer(tokenizer)
    vocabulary = list(tokenizer.vocabulary)
    special = {role: vocabulary[getattr(tokenizer, attr)]
               for role, attr in _ROLES.items()}
    ids = {w: i for i, w in enumerate(vocabulary)}
    model = Tokenizer(models.WordLevel(ids, unk_token=special["unk_token"]))
    model.normalizer = normalizers.Lowercase()
    # whitespace, then every character but a-z 0-9 ' alone
    model.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(),
        pre_tokenizers.Split(Regex(r"[^a-z0-9']"), behavior="isolated")])
    cls, sep = special["cls_token"], special["sep_token"]
    model.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}",
        special_tokens=[(cls, tokenizer.cls_id), (sep, tokenizer.sep_id)])
    # split_special_tokens: "[MASK]" typed in a text is three marks, as
    # WordTokenizer reads it
    return PreTrainedTokenizerFast(
        tokenizer_object=model,
        model_input_names=["input_ids", "attention_mask"],
        split_special_tokens=True, **special)


def _examples(ids: np.ndarray, pad_id: int) -> list[dict[str, list[int]]]:
    """(B, T) ids as transformers' examples: one dict per row, its padding dropped (the collator pads)."""
    return [{"input_ids": row[row != pad_id].tolist()} for row in ids]


def collator_masks(hf_tok, ids, *, mask_prob: float = 0.15, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(input ids, selected) = DataCollatorForLanguageModeling(rows of ids): transformers' masking of ids.

    The (B, T) rows of ``ids`` lose their padding and go through the collator in one call, which pads them
    back to the longest row; returns its input ids and where its labels are not -100, (B, T') each. The
    collator's generator is seeded by ``seed`` (at least 1: the collator ignores a seed of 0).
    """
    from transformers import DataCollatorForLanguageModeling

    ids = plain_array("ids", ids)
    mask_prob = check_open_unit("mask_prob", mask_prob)
    seed = check_int("seed", seed, minimum=1)
    collator = DataCollatorForLanguageModeling(hf_tok, mlm_probability=mask_prob, seed=seed)
    out = collator(_examples(ids, hf_tok.pad_token_id))
    return out["input_ids"].numpy(), out["labels"].numpy() != -100


def _check_masking(original, input_ids, selected, special_ids):
    """:func:`masking_counts`'s arrays, checked: one shape, no special token selected."""
    original, input_ids, selected = (plain_array(name, a) for name, a in (
        ("original", original), ("input_ids", input_ids), ("selected", selected)))
    if not original.shape == input_ids.shape == selected.shape:
        raise ValueError(f"original, input_ids and selected must have one shape, got {original.shape}, "
                         f"{input_ids.shape} and {selected.shape}")
    if (selected & np.isin(original, list(special_ids))).any():
        raise ValueError("selected holds a special token: a masking never selects one")
    return original, input_ids, selected


def masking_counts(original, input_ids, selected, *, mask_id: int,
                   special_ids) -> dict[str, int]:
    """n_kind = #{selected t : x_t -> x'_t of that kind}.

    What a masking did, read from its input and output. ``original`` and
    ``input_ids`` are the ids before and after masking, ``selected`` where a
    prediction is asked; all (B, T). Counts the maskable tokens (not
    special), the selected ones and, among those, the ones that became
    ``[MASK]``, another token (of which: a special token) or stayed
    unchanged. It reads only what any masking leaves behind, so geron_lib's
    and transformers' maskings are counted alike.
    """
    original, input_ids, selected = _check_masking(original, input_ids,
                                                   selected, special_ids)
    special = np.isin(original, list(special_ids))
    new = input_ids[selected]
    became_mask = new == mask_id
    unchanged = (new == original[selected]) & ~became_mask
    other = ~became_mask & ~unchanged
    other_special = other & np.isin(new, list(special_ids))
    return {"maskable": int((~special).sum()),
            "selected": int(selected.sum()),
            "mask": int(became_mask.sum()),
            "other": int(other.sum()),
            "other_special": int(other_special.sum()),
            "unchanged": int(unchanged.sum())}


def _check_hf_training(epochs, batch_size, lr, schedule, held_out, seed, threads, record):
    """:func:`hf_train_mlm`'s settings, checked: (epochs, batch_size, lr, seed, threads)."""
    checked = (check_int("epochs", epochs, minimum=1), check_int("batch_size", batch_size, minimum=1),
               check_positive_number("lr", lr), check_int("seed", seed, minimum=1),
               None if threads is None else check_int("threads", threads, minimum=1))
    check_type("held_out", held_out, MaskedBatch)
    if not callable(schedule):
        raise TypeError(f"schedule must be a function of the step (1, 2, ...), got {type(schedule).__name__}")
    if record is not None:
        check_type("record", record, list)
    return checked


def hf_train_mlm(hf, hf_tok, train_ids, *,
                 epochs: int, batch_size: int, lr: float,
                 schedule: Callable[[int], float], held_out: MaskedBatch,
                 weight_decay: float = 0.01, max_grad_norm: float = 1.0,
                 mask_prob: float = 0.15, seed: int = 1,
                 threads: int | None = 1,
                 record: list | None = None) -> dict[str, list[float]]:
    """theta <- AdamW(theta, clip(grad L(theta; collator(batch))), lr(t)).

    For every batch of every epoch: chapter 4's loop as a transformers
    ``Trainer`` on the ``*ForMaskedLM`` ``hf``, trained in place: the
    collator masks every batch afresh (dynamic masking), geron_lib's AdamW
    groups (:func:`torch_adamw`), the gradient's global norm clipped at
    ``max_grad_norm``, the learning rate ``schedule(t)`` at step
    t = 1, 2, ... Batches are shuffled by a generator seeded by ``seed`` (at
    least 1) and masked by one seeded by ``seed`` plus the process's rank (0
    in a single process); on a CPU, torch runs on ``threads`` threads (None:
    as many as it likes). Trainer picks the device (a GPU when there is
    one), and ``accelerate launch`` or ``torchrun`` run the same call on
    several. Returns per epoch the mean training loss and the loss on
    ``held_out``'s fixed masks after it; ``record``, a list, receives every
    batch the collator hands the Trainer (its tensors as numpy arrays).
    """
    import torch
    from transformers import (
        DataCollatorForLanguageModeling,
        PrinterCallback,
        Trainer,
        TrainerCallback,
        TrainingArguments,
    )

    from .torch_mlm import hf_mlm_inputs, torch_adamw

    epochs, batch_size, lr, seed, threads = _check_hf_training(
        epochs, batch_size, lr, schedule, held_out, seed, threads, record)
    held_out_inputs, held_out_loss = hf_mlm_inputs(held_out), []

    class HeldOutLoss(TrainerCallback):
        def on_epoch_end(self, args, state, control, model=None, **kwargs):
            model.eval()
            # on the model's device, whichever Trainer chose
            with torch.no_grad():
                inputs = {k: v.to(model.device)
                          for k, v in held_out_inputs.items()}
                held_out_loss.append(float(model(**inputs).loss))
            model.train()

    args = TrainingArguments(
        output_dir=tempfile.gettempdir(),
        num_train_epochs=epochs, per_device_train_batch_size=batch_size,
        learning_rate=lr, max_grad_norm=max_grad_norm,
        seed=seed, data_seed=seed,
        logging_strategy="epoch", save_strategy="no", report_to="none",
        disable_tqdm=True, dataloader_num_workers=0,
        # pinned memory only helps a copy to a GPU
        dataloader_pin_memory=torch.cuda.is_available())
    optimizer = torch_adamw(hf, lr=lr, weight_decay=weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: schedule(step + 1) / lr)
    # one masking stream per process: under a launcher each process reads
    # other sentences, and the same seed everywhere would give rows in the
    # same place of their batches the same selected positions
    collator = DataCollatorForLanguageModeling(
        hf_tok, mlm_probability=mask_prob, seed=seed + args.process_index)
    if record is not None:
        collate = collator

        def collator(examples):
            batch = collate(examples)
            record.append({k: v.numpy().copy() for k, v in batch.items()})
            return batch
    # the collator pads each batch
    examples = _examples(np.asarray(train_ids), hf_tok.pad_token_id)
    trainer = Trainer(model=hf, args=args, train_dataset=examples,
                      data_collator=collator,
                      optimizers=(optimizer, scheduler),
                      callbacks=[HeldOutLoss()])
    trainer.remove_callback(PrinterCallback)  # no log lines on the page
    before = torch.get_num_threads()
    torch.set_num_threads(threads or before)
    try:
        trainer.train()
    finally:
        torch.set_num_threads(before)
    train_loss = [entry["loss"] for entry in trainer.state.log_history
                  if "loss" in entry]
    return {"train_loss": train_loss, "held_out_loss": held_out_loss}
