"""geron_lib: the numpy library behind the book on ALBERT, RoBERTa and the attention output projection."""

from . import attention, layers, masking, rng
from .config import PRESETS, EncoderConfig
from .encoder import Encoder
from .params import ParameterCount, count_parameters
from .reference import SeedResult, albert, roberta

__all__ = ["PRESETS", "Encoder", "EncoderConfig", "ParameterCount", "SeedResult", "albert",
           "attention", "count_parameters", "layers", "masking", "rng", "roberta"]
