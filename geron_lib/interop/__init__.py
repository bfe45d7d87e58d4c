"""Other libraries' views of the model. Hugging Face: configs and weights in numpy (``hf_config``,
``hf_weights``), and transformers models built from a config (``torch_models``, ``torch_mlm``, with
``hf_training`` for its collator and Trainer; the optional ``hf`` extra). JAX: both attention forms written
per head, under ``jax.vmap`` and batched (``jax_attention``), and what XLA compiles from them
(``jax_programs``; the optional ``jax`` extra). Imports nothing above :mod:`geron_lib.model`; those three
torch modules alone import torch or transformers, those two jax modules alone jax (contracts that
``make lint`` checks)."""
