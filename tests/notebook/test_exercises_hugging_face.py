"""The Hugging Face appendix's checkers: RoBERTa's position ids and the unfactorised ALBERT's count."""

import numpy as np

from geron_lib import PRESETS, count_parameters
from geron_lib.notebook.exercises.hugging_face import (
    check_roberta_positions,
    check_unfactorised_albert,
    unfactorised_albert_count,
)


def test_exercise_checkers():
    assert check_roberta_positions([2, 3, 4, 5, 6, 1, 1]).correct
    assert "BERT's numbering" in check_roberta_positions(list(range(7))).message
    assert "padding token takes pad_token_id" in check_roberta_positions([2, 3, 4, 5, 6, 7, 8]).message
    assert "7 position ids" in check_roberta_positions([2, 3]).message
    for bad in ("2345611", None, [2.5, 3, 4, 5, 6, 1, 1], "2", ["2", "3", "4", "5", "6", "1", "1"]):
        assert not check_roberta_positions(bad).correct
    # read once: a correct answer given as a generator (or any one-pass iterable) is accepted
    assert check_roberta_positions(p for p in [2, 3, 4, 5, 6, 1, 1]).correct
    assert check_roberta_positions(iter([2.0, 3, 4, 5, 6, 1, 1])).correct
    assert check_roberta_positions(np.array([2, 3, 4, 5, 6, 1, 1])).correct
    # the unfactorised ALBERT: the count at width H plus the E -> H map transformers keeps
    unfactorised = count_parameters(PRESETS["albert-base-v2"].replace(embedding_size=None), pooler=True).total
    assert unfactorised_albert_count() == unfactorised + 768 * 768 + 768
    assert check_unfactorised_albert(unfactorised + 768 * 768 + 768).correct
    assert "embedding_hidden_mapping_in" in check_unfactorised_albert(unfactorised).message
