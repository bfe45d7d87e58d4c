"""Pretraining: the tokenizer, the corpus (with its data), BERT's masking and the masking schedules, AdamW
and the training loop. Imports only :mod:`geron_lib.model` (a contract in ``make test``)."""
