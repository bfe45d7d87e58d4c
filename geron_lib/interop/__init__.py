"""Hugging Face interop: configs and weights in numpy (``hf_config``, ``hf_weights``), and transformers
models built from a config (``torch_models``, needs the optional ``hf`` extra). Imports only
:mod:`geron_lib.model` (a contract in ``make test``)."""
