"""The checker of the appendix "From numpy to PyTorch"."""

import pytest

from geron_lib.notebook.exercises.torch_road import check_special_replacement_share, special_replacement_share


def test_the_share_is_a_tenth_of_the_special_fraction():
    assert special_replacement_share(172, 4) == pytest.approx(0.1 * 4 / 172)
    assert special_replacement_share(100, 0) == 0


def test_right_answers_pass_and_known_slips_say_what_went_wrong():
    assert check_special_replacement_share(0.1 * 4 / 172)
    assert check_special_replacement_share(0.00233)  # three figures are enough
    slip = check_special_replacement_share(4 / 172)
    assert not slip and "one selected token in ten" in slip.message
    slip = check_special_replacement_share(0.15 * 0.1 * 4 / 172)
    assert not slip and "share of all tokens" in slip.message
    slip = check_special_replacement_share(0.1 * 5 / 172)
    assert not slip and "still a [MASK]" in slip.message
    wrong = check_special_replacement_share(0.5)
    assert not wrong and "too large" in wrong.message
    assert not check_special_replacement_share("0.002")


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="n_special"):
        special_replacement_share(4, 5)
    with pytest.raises(ValueError, match="vocab_size"):
        special_replacement_share(0, 0)
