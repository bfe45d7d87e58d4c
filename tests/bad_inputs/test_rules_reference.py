"""The reference implementation's entries at bad and unusual inputs: albert() and roberta(), its generator and
its masks. Each rule refuses with a message naming the argument (in the reference's own names: d_model,
n_heads, ...); seeds of any size are taken modulo 2^32, as the reference's generator takes them."""

from functools import partial as call

import numpy as np
import pytest

from bad_inputs.inputs import INF, NAN
from bad_inputs.outcome import assert_python_twin, assert_same, case, refused
from geron_lib.reference import encoders as ref
from geron_lib.reference import masks as ref_masks
from geron_lib.reference import rng as ref_rng

X = [[1, 2, 3, 4], [4, 3, 2, 1]]
REFERENCES = {"albert": ref.albert, "roberta": ref.roberta}


def n_params(reference, *args, **kwargs) -> int:
    return reference(*args, **kwargs).n_params


def hidden(reference, *args, **kwargs) -> np.ndarray:
    return reference(*args, **kwargs).hidden


@pytest.mark.parametrize(("entry", "error", "name"), [
    *(case(entry, label, call(fn, *args, **kwargs), error, name)
      for entry, fn in REFERENCES.items()
      for label, args, kwargs, error, name in (
          ("X a str", ("1 2 3",), {}, TypeError, "X"), ("X empty", ([],), {}, ValueError, "X"),
          ("X -1", ([[1, -1]],), {}, ValueError, "X"),
          ("n_heads 3 for d_model 8", (X,), dict(n_heads=3), ValueError, "n_heads"),
          ("n_layers 0", (X,), dict(n_layers=0), ValueError, "n_layers"),
          ("n_layers 10**9", (X,), dict(n_layers=10**9), ValueError, "n_layers"),
          ("d_model 2.0", (X,), dict(d_model=2.0), TypeError, "d_model"),
          ("vocab_size below the largest id", (X,), dict(vocab_size=3), ValueError, "vocab_size"),
          ("vocab_size 10**12", (X,), dict(vocab_size=10**12), ValueError, "vocab_size"),
          ("d_ff 0", (X,), dict(d_ff=0), ValueError, "d_ff"),
          ("seed 1.5", (X,), dict(seed=1.5), TypeError, "seed"),
          ("seed None", (X,), dict(seed=None), TypeError, "seed"))),
    case("albert", "d_embed above d_model", call(ref.albert, X, d_embed=9), ValueError, "d_embed"),
    case("albert", "d_embed 0", call(ref.albert, X, d_embed=0), ValueError, "d_embed"),
    case("roberta", "mask_prob NaN", call(ref.roberta, X, mask_prob=NAN), ValueError, "mask_prob"),
    case("roberta", "mask_prob 0.99 masks every token", call(ref.roberta, X, mask_prob=0.99), ValueError,
         "mask_prob"),
    case("roberta", "epochs 0", call(ref.roberta, X, epochs=0), ValueError, "epochs"),
    case("roberta", "epochs 10**9", call(ref.roberta, X, epochs=10**9), ValueError, "epochs"),
])
def test_the_reference_refuses_a_bad_argument_in_its_own_names(entry, error, name):
    with refused(error, name):
        entry()


@pytest.mark.parametrize(("entry", "error", "name"), [
    case("rng.draws", "n 10**10", call(ref_rng.draws, 0, 10**10), ValueError, "draws"),
    case("rng.draws", "n -1", call(ref_rng.draws, 0, -1), ValueError, "n"),
    case("rng.draws", "n 10**400", call(ref_rng.draws, 0, 10**400), ValueError, "n ="),
    case("rng.draws", "scale NaN", call(ref_rng.draws, 0, 3, NAN), ValueError, "scale"),
    case("rng.draws", "scale 0", call(ref_rng.draws, 0, 3, 0), ValueError, "scale"),
    case("rng.draws", "seed 0.5", call(ref_rng.draws, 0.5, 3), TypeError, "seed"),
    case("rng.draws_loop", "n 10**10", call(ref_rng.draws_loop, 0, 10**10), ValueError, "n"),
    *(case("rng.draws_loop", label, call(ref_rng.draws_loop, 0, 3, scale), error, "scale")
      for label, scale, error in (("scale NaN", NAN, ValueError), ("scale 0", 0, ValueError),
                                  ("scale True", True, TypeError), ("scale 'x'", "x", TypeError))),
    case("rng.draws_rows", "seeds an int", call(ref_rng.draws_rows, 5, 3), TypeError, "seeds"),
    case("rng.draws_rows", "seeds holding a float", call(ref_rng.draws_rows, [1, 2.5], 3), TypeError,
         "seeds"),
    case("rng.draws_rows", "seeds a set", call(ref_rng.draws_rows, {1, 2}, 3), TypeError, "seeds"),
    case("rng.draws_rows", "seeds a 0-d array", call(ref_rng.draws_rows, np.array(3), 3), TypeError, "seeds"),
    case("rng.draws_rows", "10**6 seeds x 10**4", call(ref_rng.draws_rows, range(10**6), 10**4), ValueError,
         "draws"),
    case("rng.tensor", "shape an int", call(ref_rng.tensor, 0, 5), TypeError, "shape"),
    case("rng.tensor", "shape holding -1", call(ref_rng.tensor, 0, (2, -1)), ValueError, "shape"),
    case("rng.tensor", "shape (10**6, 10**6)", call(ref_rng.tensor, 0, (10**6, 10**6)), ValueError, "draws"),
    case("masks.fixed_count_masks", "n_rows 10**9", call(ref_masks.fixed_count_masks, 0, 0, 10**9, 10, 2),
         ValueError,
         "n_rows"),
    case("masks.fixed_count_masks", "n_mask above T", call(ref_masks.fixed_count_masks, 0, 0, 2, 4, 5),
         ValueError,
         "n_mask"),
    case("masks.fixed_count_masks", "epoch -1", call(ref_masks.fixed_count_masks, 0, -1, 2, 4, 1), ValueError,
         "epoch"),
    case("masks.masked_count", "T 0", call(ref_masks.masked_count, 0, 0.15), ValueError, "T"),
    case("masks.masked_count", "T 10**400", call(ref_masks.masked_count, 10**400, 0.15), ValueError, "T"),
    case("masks.masked_count", "mask_prob inf", call(ref_masks.masked_count, 10, INF), ValueError,
         "mask_prob"),
])
def test_the_generator_and_the_masks_refuse_a_bad_argument_naming_it(entry, error, name):
    with refused(error, name):
        entry()


@pytest.mark.parametrize(("entry", "twin"), [
    *(case(entry, "numpy integers",
           call(n_params, fn, np.array(X), n_layers=np.int64(2), d_model=np.int32(8)),
           call(n_params, fn, X, n_layers=2, d_model=8))
      for entry, fn in REFERENCES.items()),
    case("rng.tensor", "shape np.int64 dims", call(ref_rng.tensor, 0, (np.int64(2), 3)),
         call(ref_rng.tensor, 0, (2, 3))),
])
def test_numbers_of_other_types_are_read_as_the_python_numbers_they_equal(entry, twin):
    assert_python_twin(entry(), twin())


@pytest.mark.parametrize(("entry", "expected"), [
    *(case(entry, "seed 10**30", call(hidden, fn, X, seed=10**30), call(hidden, fn, X, seed=10**30 % 2**32))
      for entry, fn in REFERENCES.items()),
    case("rng.draws", "seed 2**32 + 5 is seed 5", call(ref_rng.draws, 2**32 + 5, 4),
         call(ref_rng.draws, 5, 4)),
    case("rng.draws", "seed 10**30", call(ref_rng.draws, 10**30, 4), call(ref_rng.draws, 10**30 % 2**32, 4)),
    case("rng.draws", "n 0", call(ref_rng.draws, 0, 0), np.zeros(0)),
    case("rng.draws_loop", "equals draws", call(ref_rng.draws_loop, -7, 5), call(ref_rng.draws, -7, 5)),
    case("rng.draws_rows", "seeds 10**30 and -1", call(ref_rng.draws_rows, [10**30, -1], 3),
         call(ref_rng.draws_rows, [10**30 % 2**32, -1 % 2**32], 3)),
    case("rng.draws_rows", "seeds a generator", call(ref_rng.draws_rows, (s for s in [1, 2]), 2),
         call(ref_rng.draws_rows, [1, 2], 2)),
    case("masks.fixed_count_masks", "seed 10**30", call(ref_masks.fixed_count_masks, 10**30, 0, 2, 6, 2),
         call(ref_masks.fixed_count_masks, 10**30 % 2**32, 0, 2, 6, 2)),
    case("masks.masked_count", "half to even", call(ref_masks.masked_count, 10, 0.25), 2),
])
def test_seeds_of_any_size_and_edge_values_give_the_references_numbers(entry, expected):
    assert_same(entry(), expected() if isinstance(expected, call) else expected, rtol=0)
