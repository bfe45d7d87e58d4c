"""Checking geron_lib against transformers: random models built from an EncoderConfig, their parameter counts,
and the same forward pass in both libraries. Needs torch and transformers (``pip install -e .[hf]``); nothing
here downloads anything: every model is built from its config with seeded random weights.
"""

from __future__ import annotations

import numpy as np

from ..config import EncoderConfig, max_length
from ..validate import check_choice, check_int, check_number, check_type
from .hf_config import config_to_hf
from .hf_weights import encoder_from_hf

#: "none": the bare encoder; "pooler": with the pooler (``add_pooling_layer=True``); "mlm": *ForMaskedLM.
HEADS = ("none", "pooler", "mlm")
_CLASS_PREFIX = {"albert": "Albert", "bert": "Bert", "roberta": "Roberta"}


def hf_available() -> bool:
    """True when torch and transformers can both be imported."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        return False
    return True


def hf_model(config: EncoderConfig, *, head: str = "pooler", seed: int = 0, device: str = "cpu",
             perturb: float = 0.0):
    """The transformers model of ``config`` with seeded random weights, in eval mode, without dropout.

    geron_lib has no dropout, so the model is built with dropout rates of 0: in train mode (as
    transformers' ``Trainer`` runs it) it computes what it computes in eval mode.

    ``device="meta"`` builds it without allocating a weight (enough to count parameters). ``perturb`` adds
    N(0, perturb^2) noise to every bias and layer-norm vector, which transformers initialises to 0 and 1 (a
    check with those values could not tell a gain from a bias).
    """
    import torch
    import transformers

    check_choice("head", head, HEADS)
    seed = check_int("seed", seed, minimum=0)
    perturb = check_number("perturb", perturb)
    device = check_device(device)
    hf_config = config_to_hf(config)  # ValueError for what transformers has no model of
    prefix = _CLASS_PREFIX[config.model_type]
    hf_config = getattr(transformers, f"{prefix}Config")(**hf_config, hidden_dropout_prob=0.0,
                                                         attention_probs_dropout_prob=0.0)
    if head == "mlm":
        cls, kwargs = getattr(transformers, f"{prefix}ForMaskedLM"), {}
    else:
        cls, kwargs = getattr(transformers, f"{prefix}Model"), {"add_pooling_layer": head == "pooler"}
    torch.manual_seed(seed)
    with torch.device(device):
        model = cls(hf_config, **kwargs)
    if perturb and device.type != "meta":
        with torch.no_grad():
            for p in model.parameters():
                if p.ndim == 1:
                    p.add_(perturb * torch.randn_like(p))
    return model.eval()


def check_device(device):
    """``device`` as a ``torch.device`` this build of torch can make tensors on: "cpu", "meta", or a GPU
    ("cuda", "cuda:1", "mps") that torch finds; a torch.device is taken as it is. Refuses anything else,
    naming what this build has."""
    import torch

    if not isinstance(device, str | torch.device):
        raise TypeError(f"device must be a torch device name such as 'cpu', got {type(device).__name__}")
    have = ["cpu", "meta"] + (["cuda"] if torch.cuda.is_available() else []) + (
        ["mps"] if torch.backends.mps.is_available() else [])
    try:
        parsed = torch.device(device)
    except RuntimeError:
        raise ValueError(f"device must name a device this build of torch has, one of {have}; got "
                         f"{device!r}") from None
    if parsed.type not in have:
        raise ValueError(f"device is {device!r}, but this build of torch has no such device (it has {have}; "
                         f"torch.cuda.is_available() is {torch.cuda.is_available()})")
    return parsed


def hf_num_parameters(config: EncoderConfig, head: str = "pooler") -> int:
    """transformers' ``num_parameters()`` of the model, built on the meta device (no memory, any size)."""
    return hf_model(config, head=head, device="meta").num_parameters()


def numpy_state_dict(model) -> dict[str, np.ndarray]:
    """A torch model's state dict as numpy arrays (what :func:`~geron_lib.interop.hf_weights.encoder_from_hf`
    reads)."""
    return {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}


def random_batch(config: EncoderConfig, batch: int, seq_len: int, seed: int = 0):
    """Token ids, token types and a padding mask, (B, T) each: row 0 is full, the other rows end in padding.

    Padded places hold ``pad_token_id`` (0 if None), real tokens never do; token types are random.
    """
    batch = check_int("batch", batch, minimum=1)
    seq_len = check_int("seq_len", seq_len, minimum=1)
    if seq_len > max_length(config):
        raise ValueError(f"seq_len ({seq_len}) must be at most {max_length(config)} for this config")
    if config.vocab_size < 2:
        raise ValueError("vocab_size must be at least 2 to tell real tokens from padding")
    rng = np.random.default_rng(seed)
    pad = config.pad_token_id or 0
    ids = rng.integers(0, config.vocab_size - 1, (batch, seq_len))
    ids += ids >= pad  # skip the pad id
    lengths = np.r_[seq_len, rng.integers(1, seq_len + 1, batch - 1)]
    mask = (np.arange(seq_len) < lengths[:, None]).astype(np.int64)
    ids = np.where(mask == 1, ids, pad)
    types = rng.integers(0, config.type_vocab_size, (batch, seq_len)) * mask
    return ids, types, mask


def compare_forward(config: EncoderConfig, *, seed: int = 0,
                    batch: int = 3, seq_len: int = 16,
                    perturb: float = 0.1,
                    read_as: EncoderConfig | None = None) -> dict[str, float]:
    """diff = max |h_transformers - h_geron_lib|   (float32).

    For the last hidden states and for the pooled outputs. Builds the
    transformers model with a pooler and random weights, reads its state
    dict with :func:`~geron_lib.interop.hf_weights.encoder_from_hf` and runs
    both on one padded batch: the same ids, token types and attention mask.
    ``read_as``: the configuration geron_lib reads the weights into (default
    ``config``); a deliberate mistake in it, such as the other GELU, shows
    how far that mistake moves the outputs.
    """
    if read_as is None:
        read_as = config
    check_type("read_as", read_as, EncoderConfig)
    import torch

    model = hf_model(config, head="pooler", seed=seed, perturb=perturb)
    ids, types, mask = random_batch(config, batch, seq_len, seed)
    with torch.inference_mode():
        theirs = model(input_ids=torch.from_numpy(ids),
                       token_type_ids=torch.from_numpy(types),
                       attention_mask=torch.from_numpy(mask))
    encoder = encoder_from_hf(read_as, numpy_state_dict(model),
                              dtype=np.float32)
    hidden = encoder(ids, token_type_ids=types, attention_mask=mask)
    pooled = encoder.pool(hidden)
    return {
        "last_hidden_state":
            float(np.abs(hidden - theirs.last_hidden_state.numpy()).max()),
        "pooler_output":
            float(np.abs(pooled - theirs.pooler_output.numpy()).max()),
    }
