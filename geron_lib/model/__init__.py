"""The model: configuration, parameter counts, layers, attention forms, the encoder and the MLM head, each
forward beside its backward. Imports nothing from the packages above it (a contract in ``make test``)."""
