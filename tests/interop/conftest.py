"""The torch side of interop, as fixtures: each skips without its optional packages (the hf extra), except in
CI (see tests/conftest.py)."""

import pytest


@pytest.fixture(scope="module")
def torch_mlm():
    """geron_lib.interop.torch_mlm, once torch and transformers are importable."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from geron_lib.interop import torch_mlm

    return torch_mlm


@pytest.fixture(scope="module")
def hf_training():
    """geron_lib.interop.hf_training, once torch, transformers and accelerate (for Trainer) are importable."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    from geron_lib.interop import hf_training

    return hf_training
