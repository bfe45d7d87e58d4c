"""The trade-off experiment on a tiny setup: every cell and seed trained alike, what each run records, the
weights it saves."""

import math

import numpy as np
import pytest

from geron_lib.costs.params import count_parameters
from geron_lib.model.checkpoint import encoder_from_arrays
from geron_lib.model.mlm import MaskedBatch, MaskedLM
from geron_lib.pretraining.masking import MaskingSchedule
from geron_lib.pretraining.train import train_mlm
from geron_lib.studies import tradeoffs as tx

# lr 1e-2: at the default 2e-3, eight steps move no token's row by its length (moved_rows finds none)
TINY = tx.Setup(corpus="docs", vocab_size=300, n_held_out=40, n_mlm_held_out=20, held_out_maskings=2,
                n_train=120, T=16, hidden_size=16, num_attention_heads=2, intermediate_size=32,
                embedding_sizes=(4, 16), mode_embedding_sizes=(16,), epochs=2, batch_size=32, lr=1e-2,
                evaluations=2, seeds=(0, 1))


@pytest.fixture(scope="module")
def result():
    """Every cell of TINY's grid with every seed, seed by seed, and the data's description."""
    d = tx.data(TINY)
    runs = [tx.train_one(TINY, d, E, sharing, seed) for seed in TINY.seeds for E, sharing in TINY.grid()]
    return {"data": tx.describe(TINY, d), "runs": runs}


def test_grid_is_table_3_then_table_4_each_cell_once():
    assert TINY.grid() == [(4, "none"), (16, "none"), (4, "all"), (16, "all"), (16, "attention"), (16, "ffn")]
    default = tx.Setup()
    assert len(default.grid()) == 2 * len(default.embedding_sizes) + 2 * len(default.mode_embedding_sizes)


def test_every_run_is_recorded_and_measured(result):
    runs = result["runs"]
    assert [(r["seed"], r["E"], r["sharing"]) for r in runs] == [(s, E, m) for s in TINY.seeds
                                                                   for E, m in TINY.grid()]
    L = TINY.num_hidden_layers
    # two evaluations over two epochs: one after each, the held-out loss by epoch
    per_epoch = math.ceil(result["data"]["train_rows"] / TINY.batch_size)
    steps = TINY.training(0).evaluation_steps(result["data"]["train_rows"])
    assert steps == [per_epoch, 2 * per_epoch]
    for r in runs:
        config = TINY.model_config(r["E"], r["sharing"])
        assert r["parameters"] == count_parameters(config, mlm_head=True).total
        assert r["parameters"] == MaskedLM(config).num_parameters()
        assert len(r["held_out_loss"]) == TINY.evaluations and len(r["train_loss"]) == TINY.epochs
        assert r["held_out_step"] == steps
        assert r["perplexity"] == pytest.approx(math.exp(r["held_out_loss"][-1]))
        assert len(r["movement_distance"]) == len(r["movement_cosine"]) == L
        assert all(d > 0 for d in r["movement_distance"]) and all(-1 <= c <= 1 for c in r["movement_cosine"])
        s = np.array(r["singular_values"])
        assert len(s) == r["E"] and (np.diff(s) <= 0).all()
        for key in ("effective_rank", "effective_rank_centred", "effective_rank_initial"):
            assert 1 <= r[key] <= r["E"]
        # a random V x E Gaussian table has singular values within sqrt(V) +- sqrt(E) (times its scale):
        # nearly flat, so its effective rank is close to E
        assert r["effective_rank_initial"] > 0.9 * r["E"]
        assert 0 < r["seconds_per_step"] < r["seconds"]
        assert 0 <= r["rows_moved"] <= TINY.vocab_size
        assert 1 <= r["effective_rank_moved_centred"] <= r["E"]
        assert 1 <= r["rank_90_moved_centred"] <= r["E"]
    assert result["data"]["steps_per_run"] == TINY.training(0).total_steps(result["data"]["train_rows"])
    assert "WordPieceTokenizer(300 tokens" in result["data"]["tokenizer"]


def test_a_run_is_reproducible_and_seeds_differ(result):
    d = tx.data(TINY)
    again = tx.train_one(TINY, d, 16, "all", 1)
    stored = next(r for r in result["runs"] if (r["E"], r["sharing"], r["seed"]) == (16, "all", 1))
    assert again["held_out_loss"] == stored["held_out_loss"]
    assert again["singular_values"] == stored["singular_values"]
    other = next(r for r in result["runs"] if (r["E"], r["sharing"], r["seed"]) == (16, "all", 0))
    assert other["held_out_loss"] != stored["held_out_loss"]


def test_held_out_rows_carry_several_fixed_maskings():
    d = tx.data(TINY)
    n = len(d.held_ids)
    assert len(d.held_out) == TINY.held_out_maskings * n
    assert (d.held_out.labels == np.tile(d.held_ids, (TINY.held_out_maskings, 1))).all()
    assert (d.held_out.decision[:n] != d.held_out.decision[n:2 * n]).any()
    assert tx.data(TINY).held_out.decision.tolist() == d.held_out.decision.tolist()


def test_unigram_loss_by_hand():
    # training counts of the three non-special ids 5, 6, 7: 2, 1, 0 -> add one: 3, 2, 1 of 6
    train = np.array([[1, 5, 5, 6, 2]])
    labels = np.array([[1, 5, 7, 6, 2]])
    decision = np.array([[0, 1, 1, 0, 0]])
    held = MaskedBatch(labels, labels, decision, np.ones_like(labels))
    expected = -(math.log(3 / 6) + math.log(1 / 6)) / 2
    assert tx.unigram_loss(train, held, vocab_size=8, n_special=5) == pytest.approx(expected)


def test_token_table_rank_on_known_spectra():
    rank_one = np.outer(np.arange(1.0, 31.0), np.linspace(-1, 1, 10))
    r = tx.token_table_rank(rank_one)
    assert r["effective_rank"] == pytest.approx(1.0, abs=1e-6) and r["rank_90"] == 1
    flat = np.vstack([np.eye(10)] * 3)  # ten equal singular values: 90 % of the energy is exactly nine
    r = tx.token_table_rank(flat)
    assert r["effective_rank"] == pytest.approx(10.0) and r["rank_90"] == 9
    assert np.allclose(r["singular_values"], math.sqrt(3))
    shifted = tx.token_table_rank(flat + 5.0, centred=True)  # removing the mean row removes the shift
    assert np.allclose(shifted["singular_values"], tx.token_table_rank(flat, centred=True)["singular_values"])
    assert tx.token_table_rank(flat + 5.0)["rank_90"] < 9  # ... which, kept, dominates the energy
    with pytest.raises(ValueError, match="table is zero once its mean row is removed"):
        tx.token_table_rank(np.ones((4, 3)), centred=True)


def test_moved_rows_by_hand():
    assert tx.MOVED == 1.0  # a row moved when it changed by at least its own initial length
    initial = np.tile([3.0, 4.0], (6, 1))  # every row of length 5
    trained = np.array([[6.0, 8.0],     # changed by (3, 4): 5, exactly its length -> moved
                        [0.0, 0.0],     # shrunk to zero: changed by 5 -> moved
                        [-3.0, -4.0],   # flipped: changed by 10 -> moved
                        [5.9, 4.0],     # changed by 2.9 -> not moved
                        [4.0, 3.0],     # turned, same length: changed by sqrt 2 -> not moved
                        [3.0, 4.0]])    # untouched
    assert tx.moved_rows(initial, trained).tolist() == [True, True, True, False, False, False]
    # relative to each row's own length: a short row moves with a smaller change
    assert tx.moved_rows([[0.3, 0.4], [30.0, 40.0]], [[0.0, 0.9], [30.0, 45.0]]).tolist() == [True, False]


def test_rank_in_text_by_hand():
    # rows 1 to 4 are +-(1, 0) and +-(0, 2); the pad row 0 and the unused row 5 must weigh nothing
    table = np.array([[9.0, 9.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0], [7.0, -7.0]])
    once = tx.rank_in_text(table, np.array([[1, 2, 3, 4, 0, 0]]), pad_id=0)
    # rows of mean zero; singular values are the column norms sqrt 2 and sqrt 8: p = (2/3, 1/3)
    assert np.allclose(once["singular_values"], [math.sqrt(8), math.sqrt(2)])
    entropy = -(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3))
    assert once["effective_rank"] == pytest.approx(math.exp(entropy))
    # each row as often as its token occurs: (+-1, 0) twice each, norms sqrt 4 and sqrt 8
    twice = tx.rank_in_text(table, np.array([[1, 1, 2, 0], [2, 3, 4, 0]]), pad_id=0)
    assert np.allclose(twice["singular_values"], [math.sqrt(8), 2.0])
    assert twice["rank_90"] == 2
    # the shared direction of a text's rows does not count: it is centred
    shifted = tx.rank_in_text(table + [3.0, 1.0], np.array([[1, 2, 3, 4, 0]]), pad_id=0)
    assert np.allclose(shifted["singular_values"], once["singular_values"])


def test_saved_weights_reload_into_the_trained_encoder(tmp_path):
    d = tx.data(TINY)
    E, sharing, seed = 16, "attention", 1
    record = tx.train_one(TINY, d, E, sharing, seed, save_to=tmp_path / "w.npz")
    config = TINY.model_config(E, sharing)
    with np.load(tmp_path / "w.npz") as arrays:
        loaded = encoder_from_arrays(config, arrays)
    # the trained model, trained again as the module docstring says a run is: the seed sets the initial
    # weights, the masks and the batch order
    model = MaskedLM(config, seed=seed, dtype=np.dtype(TINY.dtype))
    schedule = MaskingSchedule(d.train_ids, d.tokenizer, "dynamic", mask_prob=TINY.mask_prob, rng=seed)
    history = train_mlm(model, schedule, TINY.training(seed), held_out=d.held_out)
    assert history.held_out_loss == record["held_out_loss"]
    keep = (d.held_ids != d.tokenizer.pad_id).astype(np.int64)
    for ours, theirs in zip(loaded.hidden_states(d.held_ids, attention_mask=keep),
                            model.encoder.hidden_states(d.held_ids, attention_mask=keep), strict=True):
        assert ours.dtype == np.float32
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    start = MaskedLM(config, seed=seed, dtype=np.float32).encoder  # ... not the initial weights
    assert not np.allclose(start(d.held_ids, attention_mask=keep), loaded(d.held_ids, attention_mask=keep),
                           atol=1e-3)
    model.encoder = loaded  # the record's last hidden states are the reloaded encoder's
    assert np.allclose(tx.hidden_rank(model, d.held_ids, d.tokenizer.pad_id)["singular_values"],
                       record["hidden_singular_values_centred"], rtol=1e-5)


def test_movement_counts_real_tokens_only():
    model = MaskedLM(TINY.model_config(16, "none"), seed=3, dtype=np.float64)
    ids = np.array([[1, 7, 8, 9, 2, 0], [1, 10, 11, 2, 0, 0]])
    padded = np.hstack([ids, np.zeros((2, 4), int)])
    for a, b in zip(tx.movement(model, ids, 0), tx.movement(model, padded, 0), strict=True):
        assert np.allclose(a, b)


def test_rounded(result):
    stored = tx.rounded(result)
    r, s = result["runs"][0], stored["runs"][0]
    assert s["held_out_loss"][0] == float(f"{r['held_out_loss'][0]:.4g}")
    assert s["parameters"] == r["parameters"]


@pytest.mark.parametrize("change, error, message", [
    ({"embedding_sizes": (8, 200)}, ValueError, r"embedding_sizes must be at most hidden_size \(64\)"),
    ({"embedding_sizes": [8, 16]}, ValueError, "embedding_sizes must be a non-empty tuple"),
    ({"mode_embedding_sizes": (16, 16)}, ValueError, "mode_embedding_sizes must not repeat"),
    ({"seeds": ()}, ValueError, "seeds must be a non-empty tuple"),
    ({"corpus": "wikipedia"}, ValueError, "corpus must be one of"),
    ({"n_train": 0}, ValueError, "n_train must be at least 1"),
    ({"epochs": 1.5}, TypeError, "epochs must be an integer"),
    ({"dtype": "float16"}, ValueError, "dtype must be one of"),
    ({"hidden_size": 66}, ValueError, r"hidden_size \(66\) must be divisible by num_attention_heads"),
    ({"lr": -1.0}, ValueError, "lr must be"),
    ({"n_mlm_held_out": 3000}, ValueError, r"n_mlm_held_out \(3000\) must be below n_held_out \(3000\)"),
    ({"evaluations": 0}, ValueError, "evaluations must be at least 1"),
])
def test_setup_refuses_bad_values(change, error, message):
    with pytest.raises(error, match=message):
        tx.Setup(**change)


def test_data_refuses_a_vocabulary_the_corpus_cannot_fill():
    with pytest.raises(ValueError, match="the 'grammar' corpus yields only"):
        tx.data(tx.Setup(corpus="grammar", vocab_size=4000, n_train=200))


def test_every_run_records_the_spectra_it_plots(result):
    for r in result["runs"]:
        assert len(r["singular_values_initial"]) == r["E"]
        assert len(r["hidden_singular_values_centred"]) == TINY.hidden_size
        assert 1 <= r["effective_rank_hidden_centred"] <= TINY.hidden_size
        assert 1 <= r["rank_90_hidden_centred"] <= TINY.hidden_size
        model = MaskedLM(TINY.model_config(r["E"], r["sharing"]), seed=r["seed"], dtype=np.float32)
        initial = tx.token_table_rank(model.encoder.embeddings["word"])  # the same seed draws the same table
        assert np.allclose(r["singular_values_initial"], initial["singular_values"], rtol=1e-5)


def test_hidden_rank_reads_real_tokens_only():
    model = MaskedLM(TINY.model_config(16, "all"), seed=1, dtype=np.float64)
    ids = np.array([[1, 7, 8, 9, 2, 0], [1, 10, 11, 2, 0, 0]])
    padded = np.hstack([ids, np.zeros((2, 3), int)])
    a, b = tx.hidden_rank(model, ids, 0), tx.hidden_rank(model, padded, 0)
    assert np.allclose(a["singular_values"], b["singular_values"])
    hidden = model.encoder(ids, attention_mask=(ids != 0).astype(np.int64))[ids != 0]  # 9 tokens
    assert np.allclose(a["singular_values"], tx.token_table_rank(hidden, centred=True)["singular_values"])


def test_step_seconds_times_every_cell_on_one_batch():
    batch = tx.masked_batch(TINY, seed=3)
    assert batch.input_ids.shape == (TINY.batch_size, TINY.T) and batch.selected[:, 0].all()
    assert (batch.labels >= 5).all() and (batch.input_ids[batch.selected] == 3).all()  # [MASK] is id 3
    samples = tx.step_seconds(TINY, [(4, "none"), (16, "all")], repeat=2, min_seconds=1e-4)
    assert set(samples) == {(4, "none"), (16, "all")}
    assert all(len(s) == 2 and min(s) > 0 for s in samples.values())
    with pytest.raises(ValueError, match="cells must be a non-empty list"):
        tx.step_seconds(TINY, [])
    with pytest.raises(ValueError, match="sharing must be one of"):
        tx.step_seconds(TINY, [(16, "some")])
