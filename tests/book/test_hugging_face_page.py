"""The values appendix A1's GELU sentence rests on (issue 30, item 2): the v2 presets say gelu_new."""

from geron_lib import PRESETS
from geron_lib.interop.hf_config import HF_DEFAULTS


def test_albert_v2_presets_use_the_tanh_gelu_and_no_v1_preset_is_held():
    albert = {name: config for name, config in PRESETS.items() if name.startswith("albert-")}
    assert sorted(albert) == ["albert-base-v2", "albert-large-v2", "albert-xlarge-v2", "albert-xxlarge-v2"]
    assert {config.hidden_act for config in albert.values()} == {"gelu_new"}
    assert HF_DEFAULTS["albert"]["hidden_act"] == "gelu_new"
    assert {PRESETS[n].hidden_act for n in ("bert-base", "roberta-base")} == {"gelu"}
