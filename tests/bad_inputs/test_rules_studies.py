"""The studies' entries at bad and unusual inputs: the attention conversions, the factorised table, depth,
paired intervals, fine-tuning, the sentence tasks, attention timing, the dynamic-masking experiment, the
papers' tables, compiled programs and trained heads. Each rule refuses with a message naming the argument; an
unusual input that means something gets the right answer."""

import tempfile
from fractions import Fraction
from functools import partial as call
from pathlib import Path

import numpy as np
import pytest

from bad_inputs.inputs import CFG, IDS, INF, NAN, edited
from bad_inputs.outcome import assert_python_twin, assert_same, case, refused, run, uses
from geron_lib.pretraining.sentence_pairs import SentencePair
from geron_lib.studies import attention_timing as at
from geron_lib.studies import (
    compiled_heads,
    context_grid,
    depth,
    factorised,
    finetuning,
    hf_gap,
    intervals,
    paired,
    paper,
    roberta_paper,
    sentence_tasks,
    stored,
    trained_attention,
)
from geron_lib.studies import conversions as conv
from geron_lib.studies import dynamic_masking as dm

TABLE = np.random.default_rng(0).normal(size=(6, 4))
PAIR = SentencePair("the cat", "sat", 0)
ROW = paper.TABLE_1[2]
#: concat-form weight names, each W a broadcast view 4096 x 4096 (no memory), at h = 64
HUGE_CONCAT = {k: np.broadcast_to(np.float64(0.1), (4096, 4096)) if k.startswith("W") else None
               for k in ("W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O", "b_O")}
#: one example in each of (ids, token types, labels), for a classifier on the small config
EXAMPLE = (IDS[:1], IDS[:1] * 0, np.zeros(1, int))


def nothing() -> None:
    """A function that does nothing, for what times or counts a call."""


def round_trip_error(w: dict, num_attention_heads: int, **kwargs) -> float:
    """The error of sum_to_concat on the sum form of the concat weights ``w``."""
    return conv.sum_to_concat(conv.concat_to_sum(w, num_attention_heads), num_attention_heads, **kwargs).error


def in_float32(w: dict) -> dict:
    return {k: v.astype(np.float32) for k, v in w.items()}


def round_trip_error_in_float32(w: dict, num_attention_heads: int) -> float:
    return round_trip_error(in_float32(w), num_attention_heads)


def factors_product(table, rank) -> np.ndarray:
    A, B = factorised.best_rank_factors(table, rank)
    return A @ B


def rank_of_low_rank_table(*args, **kwargs) -> int:
    return int(np.linalg.matrix_rank(factorised.low_rank_table(*args, **kwargs)))


def interval(*args, **kwargs) -> tuple[float, float, float, float]:
    v = paired.paired_interval(*args, **kwargs)
    return v.mean, v.low, v.high, v.confidence


def setup_steps(**fields) -> int:
    return dm.Setup(**fields).steps_per_run


def epochs_and_lr(**fields) -> tuple:
    budget = finetuning.FineTuning(**fields)
    return budget.epochs, budget.lr


def rounded_train(result, digits):
    return dm.rounded(result, digits)["train"]


def first_shares(A) -> np.ndarray:
    return trained_attention.pattern_shares(A)["first"]


# The conversions between the attention forms ----------------------------------------------------------------
@pytest.mark.parametrize(("entry", "form", "edits", "error", "name"), [
    case("sum_to_concat", "W_V holding inf", conv.sum_to_concat, "sum", {"W_V": INF}, ValueError, "W_V"),
    case("sum_to_concat", "W_Q holding inf", conv.sum_to_concat, "sum", {"W_Q": INF}, ValueError, "W_Q"),
    case("sum_to_concat", "W_V holding NaN", conv.sum_to_concat, "sum", {"W_V": NAN}, ValueError, "W_V"),
    case("sum_to_concat", "W_V int dtype", conv.sum_to_concat, "sum", {"W_V": np.zeros((2, 8, 8), int)},
         TypeError,
         "W_V"),
    case("sum_to_concat", "W_V float16", conv.sum_to_concat, "sum", {"W_V": np.zeros((2, 8, 8), np.float16)},
         TypeError, "W_V"),
    case("concat_to_sum", "W_O holding inf", conv.concat_to_sum, "concat", {"W_O": INF}, ValueError, "W_O"),
    case("concat_to_sum", "W_V of the wrong shape", conv.concat_to_sum, "concat", {"W_V": np.zeros((8, 4))},
         ValueError, "W_V"),
])
def test_weights_that_break_their_rule_are_refused_by_the_conversions_naming_them(w_sum, w_cat, entry, form,
                                                                                 edits, error, name):
    with refused(error, name):
        entry(edited(w_sum if form == "sum" else w_cat, edits), 2)


@pytest.mark.parametrize(("entry", "error", "name"), [
    case("sum_to_concat", "rank 0", call(conv.sum_to_concat, uses.w_sum, 2, rank=0), ValueError, "rank"),
    case("sum_to_concat", "rank 5 above d_head 4", call(conv.sum_to_concat, uses.w_sum, 2, rank=5),
         ValueError, "rank"),
    case("sum_to_concat", "rank 2.0", call(conv.sum_to_concat, uses.w_sum, 2, rank=2.0), TypeError, "rank"),
    case("sum_to_concat", "concat weights", call(conv.sum_to_concat, uses.w_cat, 2), ValueError, "W_O"),
    case("sum_to_concat", "w a list", call(conv.sum_to_concat, [uses.w_sum], 2), TypeError, "w"),
    case("sum_to_concat", "num_attention_heads 3", call(conv.sum_to_concat, uses.w_sum, 3), ValueError,
         "num_attention_heads"),
    case("concat_to_sum", "sum weights", call(conv.concat_to_sum, uses.w_sum, 2), ValueError, "W_O"),
    case("concat_to_sum", "num_attention_heads 0", call(conv.concat_to_sum, uses.w_cat, 0), ValueError,
         "num_attention_heads"),
    case("value_maps", "form 'Sum'", call(conv.value_maps, uses.w_sum, 2, "Sum"), ValueError, "form"),
    case("value_maps", "a huge broadcast W_V", call(conv.value_maps, HUGE_CONCAT, 64, "concat"), ValueError,
         "value maps"),
])
def test_the_conversions_refuse_a_form_rank_or_head_count_that_does_not_fit_naming_it(request, entry, error,
                                                                                      name):
    with refused(error, name):
        run(request, entry)


# Every other study's refusals -------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "error", "name"), [
    case("token_embedding_params", "embedding_size above hidden_size",
         call(factorised.token_embedding_params, 100, 8, 9),
         ValueError, "embedding_size"),
    case("token_embedding_params", "vocab_size 0", call(factorised.token_embedding_params, 0, 8), ValueError,
         "vocab_size"),
    case("token_embedding_params", "hidden_size 8.0", call(factorised.token_embedding_params, 100, 8.0),
         TypeError,
         "hidden_size"),
    case("token_embedding_params", "projection 'yes'",
         call(factorised.token_embedding_params, 100, 8, 4, projection="yes"), TypeError, "projection"),
    case("token_embedding_params", "projection False with E < H",
         call(factorised.token_embedding_params, 100, 8, 4, projection=False), ValueError, "projection"),
    case("break_even_width", "bias 1", call(factorised.break_even_width, 100, 8, bias=1), TypeError, "bias"),
    case("break_even_width", "vocab_size -5", call(factorised.break_even_width, -5, 8), ValueError,
         "vocab_size"),
    case("best_rank_factors", "table a list", call(factorised.best_rank_factors, [[1.0, 2.0]], 1), TypeError,
         "table"),
    case("best_rank_factors", "table holding NaN",
         call(factorised.best_rank_factors, np.array([[1.0, NAN]]), 1),
         ValueError, "table"),
    case("best_rank_factors", "table int dtype", call(factorised.best_rank_factors, np.ones((2, 2), int), 1),
         TypeError, "table"),
    case("best_rank_factors", "table 1-D", call(factorised.best_rank_factors, np.ones(3), 1), TypeError,
         "table"),
    case("best_rank_factors", "rank above min(V, H)", call(factorised.best_rank_factors, TABLE, 5),
         ValueError,
         "rank"),
    case("best_rank_factors", "table float16",
         call(factorised.best_rank_factors, np.ones((3, 3), np.float16), 1),
         TypeError, "table"),
    case("rank_errors", "table holding inf", call(factorised.rank_errors, np.array([[1.0, INF]])), ValueError,
         "table"),
    case("rank_errors", "table empty", call(factorised.rank_errors, np.zeros((0, 3))), ValueError, "table"),
    case("rank_errors", "table float16", call(factorised.rank_errors, np.ones((3, 3), np.float16)), TypeError,
         "table"),
    case("low_rank_table", "noise NaN", call(factorised.low_rank_table, 10, 4, 2, noise=NAN), ValueError,
         "noise"),
    case("low_rank_table", "noise -1", call(factorised.low_rank_table, 10, 4, 2, noise=-1), ValueError,
         "noise"),
    case("low_rank_table", "seed -1", call(factorised.low_rank_table, 10, 4, 2, noise=0.1, seed=-1),
         ValueError,
         "seed"),
    case("low_rank_table", "rank 5 above H", call(factorised.low_rank_table, 10, 4, 5, noise=0.1), ValueError,
         "rank"),
    case("low_rank_table", "vocab_size 10**6 x 10**4",
         call(factorised.low_rank_table, 10**6, 10**4, 2, noise=0.1),
         ValueError, "table"),
    *(case("params_by_depth", label, call(depth.params_by_depth, CFG, depths), error, "depths")
      for label, depths, error in (("depths an int", 3, TypeError), ("depths a str", "123", TypeError),
                                   ("depths empty", [], ValueError), ("depths holding 0", [1, 0], ValueError),
                                   ("depths holding 2.0", [2.0], TypeError), ("depths a set", {1, 2},
                                    TypeError),
                                   ("depths a 0-d array", np.array(2), TypeError))),
    case("params_by_depth", "config a dict", call(depth.params_by_depth, {"hidden_size": 8}, [1]), TypeError,
         "config"),
    case("layer_movement", "states an array", call(depth.layer_movement, np.zeros((3, 1, 2, 4))), TypeError,
         "states"),
    case("layer_movement", "states of one array", call(depth.layer_movement, [np.zeros((1, 2, 4))]),
         TypeError,
         "states"),
    case("layer_movement", "states of two shapes",
         call(depth.layer_movement, [np.zeros((1, 2, 4)), np.zeros((1, 3, 4))]), ValueError, "states"),
    case("layer_movement", "states holding NaN",
         call(depth.layer_movement, [np.zeros((1, 2, 4)), np.full((1, 2, 4), NAN)]), ValueError, "states"),
    case("layer_movement", "states of strings",
         call(depth.layer_movement, [np.full((1, 2, 4), "a"), np.full((1, 2, 4), "b")]), TypeError, "states"),
    case("movement_by_sharing", "seq_len above max_position_embeddings",
         call(depth.movement_by_sharing, CFG, seq_len=17), ValueError, "seq_len"),
    case("movement_by_sharing", "batch 10**9", call(depth.movement_by_sharing, CFG, batch=10**9, seq_len=16),
         ValueError, "batch"),
    case("movement_by_sharing", "seed -1", call(depth.movement_by_sharing, CFG, seed=-1, seq_len=4),
         ValueError,
         "seed"),
    case("movement_by_sharing", "batch 0", call(depth.movement_by_sharing, CFG, batch=0), ValueError,
         "batch"),
    case("forward_time_by_sharing", "repeats 0",
         call(depth.forward_time_by_sharing, CFG, [1], seq_len=4, repeats=0),
         ValueError, "repeats"),
    case("forward_time_by_sharing", "repeats 10**9",
         call(depth.forward_time_by_sharing, CFG, [1], seq_len=4, repeats=10**9), ValueError, "repeats"),
    case("forward_time_by_sharing", "seed -1",
         call(depth.forward_time_by_sharing, CFG, [1], seq_len=4, seed=-1),
         ValueError, "seed"),
    case("forward_time_by_sharing", "clock not callable",
         call(depth.forward_time_by_sharing, CFG, [1], seq_len=4, clock=5), TypeError, "clock"),
    case("forward_time_by_sharing", "seq_len 17", call(depth.forward_time_by_sharing, CFG, [1], seq_len=17),
         ValueError, "seq_len"),
    case("forward_time_by_sharing", "batch 10**12",
         call(depth.forward_time_by_sharing, CFG, [1], batch=10**12, seq_len=4), ValueError, "batch"),
    case("weight_bytes_per_forward", "dtype float16", call(depth.weight_bytes_per_forward, CFG, np.float16),
         ValueError, "dtype"),
    case("weight_bytes_per_forward", "dtype 'banana'", call(depth.weight_bytes_per_forward, CFG, "banana"),
         TypeError,
         "dtype"),
    case("weight_bytes_per_forward", "config None", call(depth.weight_bytes_per_forward, None), TypeError,
         "config"),
    case("cache_sizes", "root an int", call(depth.cache_sizes, 3), TypeError, "root"),
    case("holm", "an empty family", call(intervals.holm, {}), TypeError, "p_values"),
    case("holm", "a p of 1.5", call(intervals.holm, {"a": 0.01, "b": 1.5}), ValueError, "p_values"),
    case("holm_levels", "a list", call(intervals.holm_levels, [0.01, 0.2]), TypeError, "p_values"),
    case("holm_levels", "a p of NaN", call(intervals.holm_levels, {"a": NAN}), ValueError, "p_values"),
    case("holm_levels", "a p given as text", call(intervals.holm_levels, {"a": "0.01"}), TypeError,
         "p_values"),
    case("paired_interval", "a of strings", call(paired.paired_interval, ["x", "y"], [1, 2]), TypeError, "a"),
    case("paired_interval", "b a generator", call(paired.paired_interval, [1, 2], (x for x in [1, 2])),
         TypeError,
         "b"),
    case("paired_interval", "a of booleans", call(paired.paired_interval, [True, False], [1, 2]), TypeError,
         "a"),
    case("paired_interval", "a complex", call(paired.paired_interval, [1j, 2], [1, 2]), TypeError, "a"),
    case("paired_interval", "a None", call(paired.paired_interval, None, [1, 2]), TypeError, "a"),
    case("paired_interval", "one pair", call(paired.paired_interval, [1], [2]), ValueError, "a and b"),
    case("paired_interval", "lengths differ", call(paired.paired_interval, [1, 2, 3], [1, 2]), ValueError,
         "a and b"),
    case("paired_interval", "a holding NaN", call(paired.paired_interval, [1, NAN], [1, 2]), ValueError,
         "a and b"),
    case("paired_interval", "confidence 1", call(paired.paired_interval, [1, 2], [2, 1], confidence=1),
         ValueError,
         "confidence"),
    case("paired_interval", "confidence NaN", call(paired.paired_interval, [1, 2], [2, 1], confidence=NAN),
         ValueError, "confidence"),
    case("paired_interval", "confidence '95%'",
         call(paired.paired_interval, [1, 2], [2, 1], confidence="95%"),
         TypeError, "confidence"),
    *(case("FineTuning", f"{field} {value!r}", call(finetuning.FineTuning, **{field: value}), error, field)
      for field, value, error in (
          ("epochs", 0, ValueError), ("batch_size", 2.5, TypeError), ("lr", NAN, ValueError), ("lr", 0,
           ValueError),
          ("warmup", 1, ValueError), ("warmup", INF, ValueError), ("weight_decay", -0.1, ValueError),
          ("max_grad_norm", INF, ValueError), ("test_share", 0, ValueError), ("test_share", "0.3",
           TypeError))),
    case("FineTuning", "weight_decay 1.5", call(finetuning.FineTuning, weight_decay=1.5), ValueError,
         "weight_decay"),
    case("section_label", "section an int", call(finetuning.section_label, 3), TypeError, "section"),
    case("finetuning.tasks", "paragraph_ids an int", call(finetuning.tasks, 5, uses.tok, 16), TypeError,
         "paragraph_ids"),
    case("finetuning.tasks", "paragraph_ids repeated", call(finetuning.tasks, [0] * 10, uses.tok, 16),
         ValueError,
         "paragraph_ids"),
    case("finetuning.tasks", "paragraph_ids -1", call(finetuning.tasks, [-1], uses.tok, 16), ValueError,
         "paragraph_ids"),
    case("finetuning.tasks", "paragraph_ids a set", call(finetuning.tasks, set(range(10)), uses.tok, 16),
         TypeError,
         "paragraph_ids"),
    case("finetuning.tasks", "paragraph_ids past the corpus",
         call(finetuning.tasks, range(10**7, 10**7 + 10), uses.tok, 16), ValueError, "paragraph_ids"),
    case("finetuning.tasks", "tokenizer None", call(finetuning.tasks, range(10), None, 16), TypeError,
         "tokenizer"),
    case("finetuning.tasks", "T 4", call(finetuning.tasks, range(10), uses.tok, 4), ValueError, "T"),
    case("finetuning.tasks", "budget a dict", call(finetuning.tasks, range(10), uses.tok, 16, {"epochs": 1}),
         TypeError, "budget"),
    case("finetuning.tasks", "seed -1", call(finetuning.tasks, range(10), uses.tok, 16, seed=-1), ValueError,
         "seed"),
    case("finetuning.accuracy", "model None", call(finetuning.accuracy, None, (IDS, IDS, np.zeros(1, int))),
         TypeError, "model"),
    case("finetuning.accuracy", "batch_size 0",
         call(finetuning.accuracy, uses.two_class_classifier, EXAMPLE,
              batch_size=0), ValueError, "batch_size"),
    case("finetuning.accuracy", "batch_size -1",
         call(finetuning.accuracy, uses.two_class_classifier, EXAMPLE,
              batch_size=-1), ValueError, "batch_size"),
    case("finetuning.accuracy", "examples empty",
         call(finetuning.accuracy, uses.two_class_classifier,
              (IDS[:0], IDS[:0], np.zeros(0, int))), ValueError,
         "examples"),
    case("finetuning.accuracy", "examples of two arrays", call(finetuning.accuracy, uses.two_class_classifier,
                                                               (IDS, IDS)), TypeError, "examples"),
    case("finetune", "encoder a config", call(finetuning.finetune, CFG, None), TypeError, "encoder"),
    case("finetune", "task None", call(finetuning.finetune, uses.encoder, None), TypeError, "task"),
    case("split_sentences", "paragraph None", call(sentence_tasks.split_sentences, None), TypeError,
         "paragraph"),
    case("documents", "paragraphs a str", call(sentence_tasks.documents, "A b. C d."), TypeError,
         "paragraphs"),
    case("documents", "min_sentences 0", call(sentence_tasks.documents, ["A. B."], min_sentences=0),
         ValueError,
         "min_sentences"),
    case("documents", "paragraphs a 0-d array", call(sentence_tasks.documents, np.array("A b. C d.")),
         TypeError,
         "paragraphs"),
    case("word_overlap", "first None", call(sentence_tasks.word_overlap, None, "a"), TypeError, "first"),
    case("word_overlap", "second a list", call(sentence_tasks.word_overlap, "a", ["a"]), TypeError, "second"),
    case("topic_only_accuracy", "pairs holding tuples",
         call(sentence_tasks.topic_only_accuracy, [("a", "b", 0)]),
         TypeError, "pairs"),
    case("topic_only_accuracy", "pairs empty", call(sentence_tasks.topic_only_accuracy, []), ValueError,
         "pairs"),
    case("loop_vs_batched", "seed -1", call(at.loop_vs_batched, "sum", [4], [2], hidden_size=8, seed=-1),
         ValueError,
         "seed"),
    case("loop_vs_batched", "repeat 0", call(at.loop_vs_batched, "sum", [4], [2], hidden_size=8, repeat=0),
         ValueError, "repeat"),
    case("loop_vs_batched", "repeat 10**9",
         call(at.loop_vs_batched, "sum", [4], [2], hidden_size=8, repeat=10**9),
         ValueError, "repeat"),
    case("loop_vs_batched", "form 'both'", call(at.loop_vs_batched, "both", [4], [2]), ValueError, "form"),
    case("loop_vs_batched", "T_values an int", call(at.loop_vs_batched, "sum", 4, [2]), TypeError,
         "T_values"),
    case("loop_vs_batched", "T_values a 0-d array", call(at.loop_vs_batched, "sum", np.array(4), [2]),
         TypeError,
         "T_values"),
    case("loop_vs_batched", "h 3 for hidden_size 8", call(at.loop_vs_batched, "sum", [4], [3], hidden_size=8),
         ValueError, "hidden_size"),
    case("loop_vs_batched", "T 10**5", call(at.loop_vs_batched, "sum", [10**5], [2], hidden_size=8),
         ValueError,
         "attention"),
    case("loop_vs_batched", "clock a str",
         call(at.loop_vs_batched, "sum", [4], [2], hidden_size=8, clock="cpu"),
         TypeError, "clock"),
    case("loop_vs_batched", "batch 10**400",
         call(at.loop_vs_batched, "sum", [4], [2], hidden_size=8, batch=10**400),
         ValueError, "batch"),
    case("time_split", "seed -1", call(at.time_split, 4, 2, hidden_size=8, seed=-1), ValueError, "seed"),
    case("time_split", "repeat 10**9", call(at.time_split, 4, 2, hidden_size=8, repeat=10**9), ValueError,
         "repeat"),
    case("time_split", "seq_len 10**5", call(at.time_split, 10**5, 2, hidden_size=8), ValueError, "seq_len"),
    case("time_split", "num_attention_heads 3", call(at.time_split, 4, 3, hidden_size=8), ValueError,
         "num_attention_heads"),
    case("time_split", "clock None", call(at.time_split, 4, 2, hidden_size=8, clock=None), TypeError,
         "clock"),
    case("page_faults_per_call", "fn not callable", call(at.page_faults_per_call, 3), TypeError, "fn"),
    case("page_faults_per_call", "calls 0", call(at.page_faults_per_call, nothing, calls=0), ValueError,
         "calls"),
    case("page_faults_per_call", "calls 10**12", call(at.page_faults_per_call, nothing, calls=10**12),
         ValueError,
         "calls"),
    *(case("dynamic_masking.Setup", f"{field} {value!r}", call(dm.Setup, **{field: value}), error, field)
      for field, value, error in (
          ("n_train", 0, ValueError), ("T", 2, ValueError), ("T", 10**9, ValueError), ("mask_prob", 1.5,
           ValueError),
          ("mask_prob", NAN, ValueError), ("lr", INF, ValueError), ("seeds", (), ValueError),
          ("seeds", (0, -1), ValueError), ("seeds", 3, TypeError), ("dtype", "float16", ValueError),
          ("hidden_size", 0, ValueError), ("num_attention_heads", 3, ValueError), ("copies", 0, ValueError),
          ("epochs", 1.0, TypeError))),
    case("dynamic_masking.run", "setup a dict", call(dm.run, {"n_train": 8}), TypeError, "setup"),
    case("dynamic_masking.summary", "result a list", call(dm.summary, [1]), TypeError, "result"),
    case("dynamic_masking.summary", "epoch 10",
         call(dm.summary, {"train": {"static": [[1.0, 2.0]]}, "held_out": {"static": [[1.0, 2.0]]}},
              epoch=10),
         ValueError, "epoch"),
    case("dynamic_masking.load_stored", "path an int", call(dm.load_stored, 5), TypeError, "path"),
    case("dynamic_masking.rounded", "digits 2.5",
         call(dm.rounded, {"setup": {}, "train": {}, "held_out": {}}, 2.5),
         TypeError, "digits"),
    case("dynamic_masking.rounded", "result a list", call(dm.rounded, [1]), TypeError, "result"),
    case("dynamic_masking.data", "setup an int", call(dm.data, 5), TypeError, "setup"),
    case("dynamic_masking.model_config", "setup an int", call(dm.model_config, 5, 10), TypeError, "setup"),
    case("paper.accountings", "vocab_sizes an int", call(paper.accountings, 5), TypeError, "vocab_sizes"),
    case("paper.accountings", "vocab_sizes holding 0", call(paper.accountings, [0]), ValueError,
         "vocab_sizes"),
    case("paper.to_millions", "count -1", call(paper.to_millions, -1), ValueError, "count"),
    case("paper.to_millions", "rounding 'ceil'", call(paper.to_millions, 5, "ceil"), ValueError, "rounding"),
    case("paper.reproduces", "rows a str", call(paper.reproduces, paper.PLAIN, "ALBERT base"), TypeError,
         "rows"),
    case("paper.reproduces", "accounting None", call(paper.reproduces, None, [ROW]), TypeError, "accounting"),
    case("paper.reproducing", "candidates an int", call(paper.reproducing, [ROW], candidates=5), TypeError,
         "candidates"),
    case("paper.reproducing", "candidates empty", call(paper.reproducing, [ROW], candidates=[]), TypeError,
         "candidates"),
    case("paper.reproducing", "rounding 'half'", call(paper.reproducing, [ROW], "half"), ValueError,
         "rounding"),
    case("paper.extra_needed", "accounting a str", call(paper.extra_needed, ROW, accounting="plain"),
         TypeError,
         "accounting"),
    case("paper.largest_count", "candidates holding a str", call(paper.largest_count, ROW, ["plain"]),
         TypeError,
         "candidates"),
    case("paper.markdown_table", "columns a list", call(paper.markdown_table, [ROW], [paper.PLAIN]),
         TypeError,
         "columns"),
    case("compiled_heads.compare", "before an int", call(compiled_heads.compare, 1, "x"), TypeError,
         "before"),
    case("compiled_heads.compare", "after None", call(compiled_heads.compare, "HloModule m", None), TypeError,
         "after"),
    case("compiled_heads.products", "text not a program", call(compiled_heads.products, "garbage"),
         ValueError,
         "text"),
    case("roberta_paper.row", "model unknown", call(roberta_paper.row, "RoBERTa"), ValueError, "model"),
    case("pattern_shares", "A empty", call(trained_attention.pattern_shares, np.zeros((1, 1, 0, 0))),
         ValueError,
         "A"),
    case("pattern_shares", "A holding NaN",
         call(trained_attention.pattern_shares, np.full((1, 1, 2, 2), NAN)),
         ValueError, "A"),
    case("pattern_shares", "A of strings", call(trained_attention.pattern_shares, np.full((1, 1, 2, 2), "a")),
         TypeError, "A"),
])
def test_a_study_refuses_a_bad_argument_naming_it(request, entry, error, name):
    with refused(error, name):
        run(request, entry)


# Right answers ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "twin"), [
    case("concat_to_sum", "np.int64 heads", call(conv.concat_to_sum, uses.w_cat, np.int64(2)),
         call(conv.concat_to_sum, uses.w_cat, 2)),
    case("token_embedding_params", "numpy integers, exact",
         call(factorised.token_embedding_params, np.int64(30000), np.int32(4096), np.int64(128)),
         call(factorised.token_embedding_params, 30000, 4096, 128)),
    case("break_even_width", "numpy integers",
         call(factorised.break_even_width, np.int64(30000), np.int64(768), bias=False),
         call(factorised.break_even_width, 30000, 768, bias=False)),
    case("params_by_depth", "depths a generator of np.int64",
         call(depth.params_by_depth, CFG, (np.int64(L) for L in (1, 2))), call(depth.params_by_depth, CFG,
              [1, 2])),
    case("paired_interval", "confidence a Fraction",
         call(interval, [1, 2, 4], [1, 1, 1], confidence=Fraction(9, 10)),
         call(interval, [1, 2, 4], [1, 1, 1], confidence=0.9)),
    case("FineTuning", "numpy values", call(epochs_and_lr, epochs=np.int64(2), lr=np.float32(1e-3)),
         call(epochs_and_lr, epochs=2, lr=float(np.float32(1e-3)))),
    case("FineTuning", "numpy values stored as Python ones",
         call(finetuning.FineTuning, epochs=np.int64(2), lr=np.float32(0.5)), call(finetuning.FineTuning,
              epochs=2,
                                                                                   lr=0.5)),
    case("finetuning.accuracy", "batch_size np.int64(1)",
         call(finetuning.accuracy, uses.two_class_classifier, EXAMPLE, batch_size=np.int64(1)),
         call(finetuning.accuracy, uses.two_class_classifier, EXAMPLE, batch_size=1)),
    case("documents", "min_sentences np.int64", call(sentence_tasks.documents, ["A b. C d.", "E."],
                                                     min_sentences=np.int64(2)),
         call(sentence_tasks.documents, ["A b. C d.", "E."], min_sentences=2)),
    case("dynamic_masking.Setup", "numpy integers",
         call(setup_steps, n_train=np.int64(8), seeds=(np.int64(1),)),
         call(setup_steps, n_train=8, seeds=(1,))),
    case("dynamic_masking.rounded", "digits np.int64(1)",
         call(rounded_train, {"setup": {}, "train": {"s": [[1.26]]}, "held_out": {"s": [[2.0]]}},
              np.int64(1)),
         call(rounded_train, {"setup": {}, "train": {"s": [[1.26]]}, "held_out": {"s": [[2.0]]}}, 1)),
    case("paper.to_millions", "count np.int64", call(paper.to_millions, np.int64(12_500_000)),
         call(paper.to_millions, 12_500_000)),
])
def test_numbers_of_other_types_are_read_as_the_python_numbers_they_equal(request, entry, twin):
    assert_python_twin(run(request, entry), run(request, twin))


@pytest.mark.parametrize(("entry", "expected", "tolerance"), [
    case("sum_to_concat", "rank np.int64(4)", call(round_trip_error, uses.w_cat, 2, rank=np.int64(4)), 0.0,
         1e-12),
    case("sum_to_concat", "float32 weights, exact round trip",
         call(round_trip_error_in_float32, uses.w_cat, 2), 0.0,
         1e-5),
    case("token_embedding_params", "huge Python ints, exact",
         call(factorised.token_embedding_params, 10**12, 10**6),
         10**18, 0),
    case("best_rank_factors", "rank np.int64, full", call(factors_product, TABLE, np.int64(4)), TABLE, 1e-12),
    case("rank_errors", "a zero table", call(factorised.rank_errors, np.zeros((2, 2))), np.zeros(3), 0),
    case("low_rank_table", "noise 0: exactly low rank", call(rank_of_low_rank_table, 10, 4, 2, noise=0), 2,
         0),
    case("layer_movement", "two equal states",
         call(depth.layer_movement, [np.ones((1, 2, 4)), np.ones((1, 2, 4))]),
         ([0.0], [1.0]), 1e-12),
    case("weight_bytes_per_forward", "float64 doubles float32",
         call(depth.weight_bytes_per_forward, CFG, "float64"),
         tuple(2 * b for b in depth.weight_bytes_per_forward(CFG)), 0),
    case("cache_sizes", "root missing", call(depth.cache_sizes, "/no/such/folder"), {}, 0),
    case("paired_interval", "equal differences", call(interval, [2, 3], [1, 2]), (1.0, 1.0, 1.0, 0.95), 0),
    case("paired_interval", "numpy float32 arrays",
         call(interval, np.float32([1, 2, 4]), np.float32([1, 1, 1])),
         call(interval, [1.0, 2.0, 4.0], [1.0, 1.0, 1.0]), 1e-6),
    case("section_label", "unknown section", call(finetuning.section_label, "faq"),
         finetuning.SECTIONS.index("other"), 0),
    case("split_sentences", "paragraph empty", call(sentence_tasks.split_sentences, ""), [], 0),
    case("word_overlap", "two empty strings", call(sentence_tasks.word_overlap, "", ""), 0.0, 0),
    case("topic_only_accuracy", "one pair", call(sentence_tasks.topic_only_accuracy, [PAIR]), 1.0, 0),
    case("dynamic_masking.summary", "one seed",
         call(dm.summary, {"train": {"static": [[1.0, 2.0]]}, "held_out": {"static": [[3.0, 4.0]]}}),
         {"static": {"train": (2.0, 0.0), "held_out": (4.0, 0.0)}}, 0),
    case("paper.largest_count", "candidates a generator",
         call(paper.largest_count, ROW, (a for a in [paper.PLAIN])),
         paper.PLAIN.count(ROW.config), 0),
    case("pattern_shares", "A a nested list", call(first_shares, [[[[0.5, 0.5], [0.5, 0.5]]]]), [[0.5]], 0),
])
def test_an_unusual_input_that_means_something_gets_its_value(request, entry, expected, tolerance):
    assert_same(run(request, entry), run(request, expected) if isinstance(expected, call) else expected,
                tolerance)


@pytest.mark.parametrize("calls", [case("page_faults_per_call", "calls np.int64", np.int64(2))])
def test_page_faults_are_counted_over_any_integer_number_of_calls(calls):
    faults = at.page_faults_per_call(nothing, calls=calls)  # what the machine reports, if it does
    assert faults is None or faults >= 0


# The stored results: one reader -----------------------------------------------------------------------------
def load_written(text: str, script="scripts/x.py"):
    """stored.load of a new file holding ``text``, in a folder of its own."""
    path = Path(tempfile.mkdtemp()) / "results.json"
    path.write_text(text, encoding="utf-8")
    return stored.load(path, script)


@pytest.mark.parametrize(("entry", "error", "names"), [
    case("hf_gap.load_stored", "path an int", call(hf_gap.load_stored, 5), TypeError, ("path",)),
    case("hf_gap.load_data_parallel", "no such file", call(hf_gap.load_data_parallel, "no/such/run.json"),
         FileNotFoundError, ("no/such/run.json", "scripts/data_parallel.py")),
    case("hf_gap.decomposition", "a run missing", call(hf_gap.decomposition, {"numpy": [1.0, 2.0]}),
         TypeError, ("held_out", "PyTorch")),
    case("hf_gap.decomposition", "one seed", call(hf_gap.decomposition, hf_gap.load_stored()["held_out"], 1),
         ValueError, ("seeds", "at least 2")),
    case("context_grid.load_stored", "path None", call(context_grid.load_stored, None), TypeError, ("path",)),
    case("stored.load", "path bytes", call(stored.load, b"results.json", "scripts/x.py"), TypeError,
         ("path",)),
    case("stored.load", "no such file", call(stored.load, "no/such/results.json", "scripts/x.py"),
         FileNotFoundError, ("no/such/results.json", "scripts/x.py")),
    case("stored.load", "a folder", call(stored.load, tempfile.gettempdir(), "scripts/x.py"),
         FileNotFoundError, ("scripts/x.py",)),
    case("stored.load", "JSON cut short", call(load_written, '{"runs": ['), ValueError,
         ("results.json", "not valid JSON", "scripts/x.py")),
    case("stored.load", "an empty file", call(load_written, ""), ValueError, ("results.json",)),
    case("stored.load", "a JSON list", call(load_written, "[1, 2]"), ValueError,
         ("results.json", "JSON object")),
    case("stored.load", "script None", call(load_written, "{}", None), TypeError, ("script",)),
])
def test_a_stored_result_that_cannot_be_read_is_refused_naming_the_file(request, entry, error, names):
    with refused(error, *names):
        run(request, entry)


@pytest.mark.parametrize("text", [case("stored.load", "a str path", '{"runs": [1]}')])
def test_a_str_path_reads_the_stored_result(text):
    path = Path(tempfile.mkdtemp()) / "results.json"
    path.write_text(text, encoding="utf-8")
    assert stored.load(str(path), "scripts/x.py") == {"runs": [1]}
