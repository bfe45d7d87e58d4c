"""geron_lib: the numpy library behind the book on ALBERT, RoBERTa and the attention output projection.

The packages are its layers, and imports point one way (an import-linter contract in ``make test``):

    notebook     explorers, figures, the chapters' widgets and exercise checkers (the only ipywidgets user)
    studies      what the chapters measure or reconstruct
    pretraining  tokenizer, corpus, masking, training          reference  the reference implementation
    interop      Hugging Face configs and weights, transformers and JAX views of the model
    model        layers, attention, encoder, MLM head: each forward beside its backward
    costs        closed-form counts: parameters, FLOPs, memory (the model's entries check their estimate)
    config       EncoderConfig and the presets                 timing     side-by-side timing
    validate     argument checks, used by all
"""

from .config import PRESETS, EncoderConfig
from .costs.params import ParameterCount, count_parameters
from .model import attention, layers
from .model.encoder import Encoder
from .pretraining import masking
from .reference import rng
from .reference.encoders import ReferenceResult, albert, roberta

__all__ = ["PRESETS", "Encoder", "EncoderConfig", "ParameterCount", "ReferenceResult", "albert",
           "attention", "count_parameters", "layers", "masking", "rng", "roberta"]
