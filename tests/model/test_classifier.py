"""The sequence classifier: its backward against finite differences (float64), its logits, loss and gradients
against transformers' AlbertForSequenceClassification on the same weights, its argument checks, and
from_encoder's copy."""

import numpy as np
import pytest
from randomised import randomised

from geron_lib import EncoderConfig
from geron_lib.interop.hf_config import config_to_hf
from geron_lib.interop.hf_weights import hf_names, hf_state_dict, is_transposed
from geron_lib.model.classifier import SequenceClassifier
from geron_lib.model.encoder import Encoder
from geron_lib.model.gradcheck import numeric_gradient, relative_error

PAD = 0
# three rows, the last two end in padding (id 0 only at the padded places); token types 0 then 1
IDS = np.array([[1, 5, 6, 2, 7, 8, 2],
                [1, 9, 2, 10, 2, PAD, PAD],
                [1, 11, 6, 2, PAD, PAD, PAD]])
TYPES = np.array([[0, 0, 0, 0, 1, 1, 1],
                  [0, 0, 0, 1, 1, 0, 0],
                  [0, 0, 0, 0, 0, 0, 0]])
MASK = (IDS != PAD).astype(np.int64)
LABELS = np.array([2, 0, 1])
N_CLASSES = 3
H_STEP = 1e-6
TOLERANCE = 1e-6


def tiny_config(**kw) -> EncoderConfig:
    fields = dict(vocab_size=12, hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=16, max_position_embeddings=8, type_vocab_size=2, initializer_range=0.5,
                  hidden_act="gelu")
    return EncoderConfig(**(fields | kw))



def hand_loss(logits: np.ndarray, labels: np.ndarray) -> float:
    """-mean_n log softmax(z_n)[y_n], written out here (log-sum-exp in float64)."""
    z = logits - logits.max(axis=1, keepdims=True)
    log_probs = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-log_probs[np.arange(len(labels)), labels].mean())


@pytest.mark.parametrize("sharing, E", [("none", None), ("all", 4)])
def test_every_gradient_matches_finite_differences(sharing, E):
    model = randomised(SequenceClassifier(Encoder(tiny_config(sharing=sharing, embedding_size=E), seed=1),
                                          N_CLASSES, seed=2), seed=3)

    def loss():
        return hand_loss(model.logits(IDS, token_type_ids=TYPES, attention_mask=MASK), LABELS)

    value, grads = model.loss_and_grads(IDS, LABELS, token_type_ids=TYPES, attention_mask=MASK)
    assert value == pytest.approx(loss(), abs=1e-13)
    params = model.parameters()
    assert set(grads) == set(params)
    assert {"pooler.W", "pooler.b", "classifier.W", "classifier.b"} <= set(params)
    # 10 attention arrays (W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O, ln gain and bias) and 6 FFN ones a layer
    assert len([n for n in params if n.startswith("layers.")]) == (2 if sharing == "none" else 1) * 16
    for name, p in params.items():
        numeric = numeric_gradient(loss, p, H_STEP)
        if name.endswith(".b_K"):  # a key bias shifts a query's scores alike: the softmax ignores it
            assert np.abs(grads[name]).max() < 1e-12 and np.abs(numeric).max() < 1e-8, name
        else:
            assert np.abs(grads[name]).max() > 0, name
            assert relative_error(grads[name], numeric) <= TOLERANCE, name
    # [PAD] sits only where the mask hides it, and only [CLS] is classified: its embedding row gets nothing
    assert np.abs(grads["embeddings.word"][PAD]).max() == 0
    assert np.abs(grads["embeddings.token_type"][1]).max() > 0  # the second segment's type is used


def test_padding_does_not_change_the_logits():
    model = randomised(SequenceClassifier(Encoder(tiny_config(), seed=4), N_CLASSES, seed=5), seed=6)
    padded = model.logits(IDS, token_type_ids=TYPES, attention_mask=MASK)[1]
    alone = model.logits(IDS[1:2, :5], token_type_ids=TYPES[1:2, :5])[0]
    np.testing.assert_allclose(padded, alone, rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def torch_hf():
    """(torch, transformers), once both are importable (its name marks the tests that use it hf)."""
    return pytest.importorskip("torch"), pytest.importorskip("transformers")


def hf_classifier(torch, transformers, model: SequenceClassifier):
    """transformers' AlbertForSequenceClassification holding ``model``'s weights, float64, no dropout."""
    config = transformers.AlbertConfig(**config_to_hf(model.config), num_labels=model.n_classes,
                                       hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                       classifier_dropout_prob=0.0)
    torch.manual_seed(0)
    hf = transformers.AlbertForSequenceClassification(config).to(torch.float64).eval()
    state = {f"albert.{k}": v for k, v in hf_state_dict(model.encoder).items()}
    state |= {"albert.pooler.weight": model.pooler["W"].T, "albert.pooler.bias": model.pooler["b"],
              "classifier.weight": model.head["W"].T, "classifier.bias": model.head["b"]}
    hf.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()}, strict=True)
    return hf


@pytest.mark.parametrize("sharing", ["none", "all"])
def test_logits_loss_and_gradients_equal_transformers(torch_hf, sharing):
    torch, transformers = torch_hf
    config = tiny_config(model_type="albert", embedding_size=4, sharing=sharing)
    model = randomised(SequenceClassifier(Encoder(config, seed=7), N_CLASSES, seed=8), seed=9)
    hf = hf_classifier(torch, transformers, model)
    out = hf(input_ids=torch.from_numpy(IDS), token_type_ids=torch.from_numpy(TYPES),
             attention_mask=torch.from_numpy(MASK), labels=torch.from_numpy(LABELS))
    out.loss.backward()
    np.testing.assert_allclose(model.logits(IDS, token_type_ids=TYPES, attention_mask=MASK),
                               out.logits.detach().numpy(), rtol=0, atol=1e-12)
    loss, grads = model.loss_and_grads(IDS, LABELS, token_type_ids=TYPES, attention_mask=MASK)
    assert loss == pytest.approx(out.loss.item(), abs=1e-12)
    names = {ours: f"albert.{theirs}" for ours, theirs in hf_names(config).items()}
    names |= {"pooler.W": "albert.pooler.weight", "pooler.b": "albert.pooler.bias",
              "classifier.W": "classifier.weight", "classifier.b": "classifier.bias"}
    assert set(names) == set(grads)
    theirs = dict(hf.named_parameters())
    assert set(theirs) == set(names.values())  # every trainable tensor of theirs is one of ours
    for ours, name in names.items():
        g = theirs[name].grad.numpy()
        np.testing.assert_allclose(grads[ours], g.T if is_transposed(ours) else g, rtol=1e-9, atol=1e-12,
                                   err_msg=ours)


@pytest.fixture(scope="module")
def small():
    return SequenceClassifier(Encoder(tiny_config(), seed=10), N_CLASSES)


@pytest.mark.parametrize("labels, error, match", [
    ([0, 1], ValueError, r"labels must hold one class per row of input_ids \(3\)"),
    ([0, 1, 2, 0], ValueError, r"labels must hold one class per row of input_ids \(3\)"),
    ([[0, 1, 2]], ValueError, r"labels must hold one class per row"),
    (1, ValueError, r"labels must hold one class per row"),
    ([0, 1, 3], ValueError, r"labels holds 3, but n_classes is 3"),
    ([0, -1, 2], ValueError, r"labels .*negative"),
    ([0, 0.5, 2], ValueError, r"labels .*not a whole number"),
    ([True, False, True], TypeError, r"labels .*booleans"),
])
def test_bad_labels_are_refused(small, labels, error, match):
    with pytest.raises(error, match=match):
        small.loss_and_grads(IDS, labels, token_type_ids=TYPES, attention_mask=MASK)


def test_bad_classifier_arguments_are_refused():
    encoder = Encoder(tiny_config(), seed=0)
    with pytest.raises(ValueError, match="n_classes must be at least 2, got 1"):
        SequenceClassifier(encoder, 1)
    with pytest.raises(TypeError, match="n_classes must be an integer"):
        SequenceClassifier(encoder, 2.0)
    with pytest.raises(TypeError, match="encoder must be an Encoder"):
        SequenceClassifier.from_encoder(tiny_config(), 2)
    with pytest.raises(ValueError, match="seed must be at least 0"):
        SequenceClassifier(encoder, 2, seed=-1)


@pytest.mark.parametrize("sharing", ["none", "all", "attention"])
def test_from_encoder_trains_a_copy_and_leaves_the_pretrained_encoder_as_it_was(sharing):
    pretrained = randomised(Encoder(tiny_config(sharing=sharing), seed=11), seed=12)
    before = {name: p.copy() for name, p in pretrained.parameters().items()}
    model = SequenceClassifier.from_encoder(pretrained, N_CLASSES, seed=13)
    copied = model.encoder.parameters()
    assert set(copied) == set(before)  # the same layout, shared sublayers still stored once
    for name, p in copied.items():
        np.testing.assert_array_equal(p, before[name])
        assert not np.shares_memory(p, pretrained.parameters()[name]), name
    layers = model.encoder.layers
    assert (layers[0][0] is layers[1][0]) == (sharing in ("all", "attention"))
    assert (layers[0][1] is layers[1][1]) == (sharing == "all")
    _, grads = model.loss_and_grads(IDS, LABELS, token_type_ids=TYPES, attention_mask=MASK)
    for name, p in model.parameters().items():  # one step of gradient descent on every weight
        p -= 0.1 * grads[name]
    assert max(np.abs(copied[name] - before[name]).max() for name in before) > 1e-3  # the copy moved
    for name, p in pretrained.parameters().items():
        np.testing.assert_array_equal(p, before[name], err_msg=name)
