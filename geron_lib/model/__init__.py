"""The model: layers, attention forms, the encoder and the MLM head, each forward beside its backward, and
the finite-difference checks of the backwards. Reads its configuration from :mod:`geron_lib.config` and its
entry-size estimates from :mod:`geron_lib.costs`; imports nothing from the packages above it (a contract in
``make lint``)."""
