"""The reference implementation's arithmetic, reproduced digit for digit: its generator (``rng``), its
masks (``masks``) and its two functions ``albert()`` and ``roberta()`` (``encoders``), on the model's core.
Imports only :mod:`geron_lib.model` (a contract in ``make test``)."""
