import pytest

from geron_lib.notebook.noise import ROUNDING, rounding_noise


@pytest.mark.parametrize("gap", [0.0, 6.2e-16, 3.0e-15, -1.1e-15, 9.9e-13])
def test_noise_is_shown_as_the_bound(gap):
    assert rounding_noise(gap) == "below 1e-12"


@pytest.mark.parametrize(("gap", "shown"), [(ROUNDING, "1.0e-12"), (0.57, "5.7e-01"), (-2e-3, "-2.0e-03")])
def test_a_real_difference_is_shown_as_its_value(gap, shown):
    assert rounding_noise(gap) == shown


def test_another_bound():
    assert rounding_noise(1e-10, bound=1e-9) == "below 1e-09"


def test_the_sum_weights_checker_shows_the_bound_not_the_digits():
    from geron_lib.model.attention import random_attention_weights
    from geron_lib.notebook.exercises.attention import check_sum_weights
    from geron_lib.studies.conversions import concat_to_sum

    w = random_attention_weights(32, 4, "concat", seed=5)
    assert repr(check_sum_weights(concat_to_sum(w, 4), w, 4)).endswith("(largest difference below 1e-12).")
