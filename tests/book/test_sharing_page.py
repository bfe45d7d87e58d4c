"""Chapter 2's claims about the paper's counts, training and the model's relatives, recomputed: each value
its prose shows (the page's own cells, run here) against an independent count, written out below from the
layer shapes rather than taken from geron_lib.costs; the shared block's gradient against finite
differences; what sharing saves in a training step against the parameter counts; and what the paper's
speed-ups are set beside."""

import numpy as np
import pytest
from page_cells import code_cells, run_cells

from geron_lib import PRESETS, Encoder, EncoderConfig, count_parameters
from geron_lib.costs.flops import count_flops
from geron_lib.model.gradcheck import numeric_gradient, relative_error
from geron_lib.studies import depth
from geron_lib.studies.paper import TABLE_1, TABLE_2, TABLE_3, TABLE_4

PAGE = "book/02_cross_layer_sharing"


def unshared_count(config: EncoderConfig, vocab_size: int) -> int:
    """Embeddings and L unshared layers, counted by hand: tables at width E, their layer norm, the E -> H
    map when E < H; per layer four H x H projections with biases, two layer norms, the two FFN layers."""
    V, E, H = vocab_size, config.E, config.hidden_size
    P, S, F, L = (config.max_position_embeddings, config.type_vocab_size, config.intermediate_size,
                  config.num_hidden_layers)
    embeddings = (V + P + S) * E + 2 * E + (E * H + H if E < H else 0)
    layer = 4 * (H * H + H) + 2 * H + (H * F + F) + (F * H + H) + 2 * H
    return embeddings + L * layer


def nearest_million(n: int) -> int:
    return int(np.floor(n / 1e6 + 0.5))


@pytest.fixture(scope="module")
def shown():
    return run_cells(PAGE, "7972704e")


@pytest.fixture(scope="module")
def training():
    """The page's training cells, after its imports, with the ALBERT base its figure cell defines."""
    namespace = run_cells(PAGE)
    namespace["albert_base"] = PRESETS["albert-base-v2"]
    cells = code_cells(PAGE)
    for cell_id in ("sharing-gradient", "sharing-gradient-check", "sharing-gradient-numbers",
                    "sharing-memory", "sharing-memory-numbers", "sharing-speed", "sharing-speed-numbers"):
        exec(cells[cell_id], namespace)
    return namespace


def test_the_shared_gradient_is_the_sum_of_its_uses(training):
    shared, copies, L = training["shared"], training["copies"], training["L_tiny"]
    assert shared.config.sharing == "all" and copies.config.sharing == "none" and L > 1
    # the copies are separate arrays holding the shared values
    assert len({id(a) for a, _ in copies.layers}) == L
    g_shared, g_copies = training["g_shared"], training["g_copies"]
    for name, g in g_shared.items():
        if name.startswith("layers.0."):
            uses = [g_copies[name.replace("layers.0.", f"layers.{i}.")] for i in range(L)]
            np.testing.assert_allclose(g, sum(uses), rtol=1e-10, atol=1e-13)
    assert training["grad_arrays"] == sum(1 for n in g_shared if n.startswith("layers.0."))
    # "nearly the same way" at the Hugging Face initialisation; nearly orthogonal with wider weights
    first, last = (g_copies[f"layers.{i}.ffn.W_1"].ravel() for i in (0, L - 1))
    assert training["grad_cos"] == pytest.approx(first @ last / np.linalg.norm(first) / np.linalg.norm(last))
    assert training["grad_cos"] > 0.99 and abs(training["grad_cos_wide"]) < 0.5
    assert not np.array_equal(first, last)


def test_the_shared_gradient_matches_finite_differences(training):
    # the loss whose gradient with respect to X_L is d_hidden: sum(d_hidden * X_L)
    shared, ids, d_hidden = training["shared"], training["ids"], training["d_hidden"]
    params = shared.parameters()
    for name in ("layers.0.ffn.b_1", "layers.0.attention.W_O"):
        numeric = numeric_gradient(lambda: float((d_hidden * shared(ids)).sum()), params[name], 1e-4)
        assert relative_error(training["g_shared"][name], numeric) < 1e-6, name


def test_sharing_saves_the_parameter_bytes_not_the_activations(training):
    memory, config = training["memory"], PRESETS["albert-base-v2"]
    n = {mode: count_parameters(config.replace(sharing=mode), mlm_head=True).total
         for mode in ("all", "none")}
    for mode, m in memory.items():
        assert m.itemsize == 4 and m.parameters == 4 * n[mode] * 4  # weights, gradients, m and v in float32
    assert memory["all"].activations == memory["none"].activations > memory["none"].parameters
    assert training["mem_params_ratio"] == pytest.approx(n["none"] / n["all"])
    assert 1 < training["mem_total_ratio"] < 1.5 < training["mem_params_ratio"]


def test_the_speed_ups_beside_the_arithmetic(training):
    speed = {row.model: row.speedup for row in TABLE_2}
    T, masked = 512, 77  # the models' longest sequences, 15 % of them predicted

    def step(name):
        return count_flops(PRESETS[name], T, mlm_head=True, training=True, masked=masked)

    large, albert_large, xxlarge = step("bert-large"), step("albert-large-v2"), step("albert-xxlarge-v2")
    assert training["sp_large_flops"] == pytest.approx(albert_large.total / large.total)
    assert abs(training["sp_large_flops"] - 1) < 0.02 and training["sp_large"] == speed["ALBERT large"] > 1.5
    assert training["sp_large_fewer"] > 10
    # "the fewer ones are the MLM head's narrow output layer": only the head and ALBERT's E -> H map differ
    differ = {k for k, v in large.items().items() if v != albert_large.items()[k]}
    assert differ == {"mlm_dense", "mlm_decoder", "embedding_projection"}
    head = (large.mlm_dense + large.mlm_decoder) - (albert_large.mlm_dense + albert_large.mlm_decoder)
    fewer = large.total - albert_large.total
    assert head > fewer > 0 and large.mlm_decoder - albert_large.mlm_decoder > 0.9 * fewer
    # xxlarge: many times the FLOPs, fewer times slower
    assert training["sp_xxl_flops"] == pytest.approx(xxlarge.total / large.total)
    assert training["sp_xxl_flops"] > 2 * training["sp_xxl_slower"] > 2
    assert training["sp_base_over_bert"] > 1 and abs(training["sp_base_flops"] - 1) < 0.05


def test_unshared_figures_are_plain_counts_only_at_alberts_vocabulary(shown):
    albert_V = PRESETS["albert-base-v2"].vocab_size
    unshared = [row for row in TABLE_1 + TABLE_3 + TABLE_4 if row.config.sharing == "none"]
    assert {row.model for row in unshared} >= {"BERT base", "BERT large"}
    # the page's rule: every unshared figure is the plain count at ALBERT's V, rounded to the nearest million
    assert all(nearest_million(unshared_count(row.config, albert_V)) == row.millions for row in unshared)
    # and not at each model's own V: BERT base's preset vocabulary rounds to another million
    bert = TABLE_1[0]
    assert bert.config.vocab_size != albert_V
    assert nearest_million(unshared_count(bert.config, bert.config.vocab_size)) != bert.millions
    # what the page shows is that count, at both vocabularies
    assert shown["albert_V"] == albert_V and shown["bert_own_V"] == bert.config.vocab_size
    assert shown["bert_at_albert_V"] == unshared_count(bert.config, albert_V)
    assert shown["bert_at_own_V"] == unshared_count(bert.config, bert.config.vocab_size)
    assert shown["bert_at_albert_V_m"] == shown["bert_paper_m"] == f"{bert.millions}M"
    assert shown["bert_at_own_V_m"] == f"{nearest_million(shown['bert_at_own_V'])}M" != shown["bert_paper_m"]


def test_the_independent_count_is_the_models_own():
    # the hand count above is the number of values a built encoder stores
    for config in (EncoderConfig(vocab_size=50, hidden_size=12, num_attention_heads=3, intermediate_size=20,
                                 max_position_embeddings=16, sharing="none"),
                   EncoderConfig(vocab_size=50, embedding_size=4, hidden_size=12, num_attention_heads=3,
                                 intermediate_size=20, max_position_embeddings=16, model_type="albert",
                                 sharing="none")):
        assert Encoder(config, seed=0).num_parameters() == unshared_count(config, config.vocab_size)


# The Universal Transformer as the page describes it: a fixed number of steps of one block, a fixed
# position-and-step signal added before each; all-shared ALBERT is that recurrence without the signal.

TINY = EncoderConfig(vocab_size=40, embedding_size=6, hidden_size=12, num_hidden_layers=3,
                     num_attention_heads=3, intermediate_size=20, max_position_embeddings=16,
                     model_type="albert", sharing="all")


def sinusoid(pos: int, H: int) -> np.ndarray:
    """Vaswani et al.'s position encoding of one position, written out entry by entry."""
    return np.array([np.sin(pos / 10000 ** (j / H)) if j % 2 == 0 else np.cos(pos / 10000 ** ((j - 1) / H))
                     for j in range(H)])


def test_the_coordinate_signal_is_the_position_sinusoid_plus_the_step_sinusoid():
    for T, t, H in ((5, 1, 12), (3, 7, 7)):
        expected = np.array([sinusoid(i, H) + sinusoid(t, H) for i in range(1, T + 1)])
        np.testing.assert_allclose(depth.coordinate_signal(T, t, H), expected, rtol=0, atol=1e-12)


def test_all_shared_albert_is_a_base_universal_transformer_without_its_step_signal():
    encoder = Encoder(TINY, seed=3)
    ids = np.random.default_rng(1).integers(0, TINY.vocab_size, (2, 9))
    albert = encoder.hidden_states(ids)
    plain = depth.universal_transformer_states(encoder, ids, TINY.num_hidden_layers, timestep_signal=False)
    assert len(plain) == len(albert) == TINY.num_hidden_layers + 1
    for u, a in zip(plain, albert, strict=True):
        np.testing.assert_allclose(u, a, rtol=0, atol=1e-12)
    # with the signal: the same stored block, other states ("essentially", not exactly)
    universal = depth.universal_transformer_states(encoder, ids, TINY.num_hidden_layers)
    assert not np.allclose(universal[-1], albert[-1], atol=1e-3)


def test_the_base_universal_transformer_revises_every_position_at_every_step():
    # no halting: however the ids differ, the steps are the ones asked for, and no position is copied on
    encoder = Encoder(TINY, seed=0)
    for ids in (np.arange(4)[None], np.random.default_rng(2).integers(0, TINY.vocab_size, (3, 12))):
        states = depth.universal_transformer_states(encoder, ids, 7)
        assert len(states) == 8
        for before, after in zip(states[:-1], states[1:], strict=True):
            assert np.all(np.abs(after - before).max(axis=-1) > 1e-6)


def test_the_universal_transformer_stores_what_all_shared_albert_stores():
    # the signal is a function of (T, t, H) alone: nothing stored beyond the block and the embeddings
    encoder = Encoder(TINY, seed=0)
    before = {k: v.copy() for k, v in encoder.parameters().items()}
    depth.universal_transformer_states(encoder, np.arange(5)[None], 4)
    after = encoder.parameters()
    assert before.keys() == after.keys() and all(np.array_equal(before[k], after[k]) for k in before)
    assert sum(v.size for v in after.values()) == count_parameters(TINY).total


@pytest.mark.parametrize("bad, message", [
    (dict(steps=0), "steps"), (dict(timestep_signal=1), "timestep_signal"),
    (dict(input_ids=[[99]]), "input_ids"), (dict(input_ids=np.zeros((1, 17), int)), "position table")])
def test_the_universal_transformer_checks_its_arguments(bad, message):
    arguments = dict(input_ids=np.arange(4)[None], steps=2) | bad
    signal = arguments.pop("timestep_signal", True)
    with pytest.raises((TypeError, ValueError), match=message):
        depth.universal_transformer_states(Encoder(TINY), arguments["input_ids"], arguments["steps"],
                                           timestep_signal=signal)
    with pytest.raises(ValueError, match="sharing='all'"):
        depth.universal_transformer_states(Encoder(TINY.replace(sharing="none")), np.arange(4)[None], 2)


def test_the_rule_of_thumb_is_kaplans_two_and_six_per_parameter_plus_the_attention():
    # "two FLOPs per parameter per token for a forward pass, six for a training step" (Kaplan et al.,
    # section 2.1), N the stack's parameters outside the embeddings, with an encoder's two T^2 products
    from geron_lib.costs.flops import approximate_flops_per_token

    for name, T in (("bert-base", 128), ("albert-base-v2", 512)):
        config = PRESETS[name]
        L, H, F = config.num_hidden_layers, config.hidden_size, config.intermediate_size
        layer = 4 * (H * H + H) + 2 * H + (H * F + F) + (F * H + H) + 2 * H
        N = layer if config.sharing == "all" else L * layer  # the stack as stored
        assert approximate_flops_per_token(config, T) == 2 * N + 4 * L * T * H
        assert approximate_flops_per_token(config, T, training=True) == 6 * N + 12 * L * T * H
