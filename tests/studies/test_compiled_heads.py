"""Reading the matrix products of a compiled program (geron_lib.studies.compiled_heads): on hand-made HLO and
StableHLO texts with known products, and on the programs jax compiles from both attention forms at one
small size (those tests need the optional jax extra; under CI=true a skip fails)."""

from collections import Counter

import pytest

from geron_lib.studies.compiled_heads import Product, compare, product_table, products, program_kind

# Three products run: %dot in ENTRY, and %fused_computation's dot, fused twice (the fusion's computation is
# called by two instructions). %unused is never called: its dot does not run. Operands are written by name
# (as jax 0.10 prints them) and, in the second fusion's computation, with their shapes (older printers).
HLO = """HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[2,3,4]{2,1,0})->f32[6,4]{1,0}}

FileNames
1 "<stdin>"

%region_0.1 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %add = f32[] add(%a, %b)
}

%fused_computation (param_0: f32[2,3,4], param_1: f32[2,4,5]) -> f32[2,3,5] {
  %param_0 = f32[2,3,4]{2,1,0} parameter(0)
  %param_1 = f32[2,4,5]{2,1,0} parameter(1)
  ROOT %dot_general.0 = f32[2,3,5]{2,1,0} dot(%param_0, %param_1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, metadata={op_name="jit(f)/dot_general"}
}

%fused_computation.1 (param_0.1: f32[6,5]) -> f32[6,4] {
  %param_0.1 = f32[6,5]{1,0} parameter(0)
  %constant = f32[5,4]{1,0} constant({...})
  ROOT %dot.1 = f32[6,4]{1,0} dot(f32[6,5]{1,0} %param_0.1, f32[5,4]{1,0} %constant), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

%unused (p: f32[8,8]) -> f32[8,8] {
  %p = f32[8,8]{1,0} parameter(0)
  ROOT %dot.9 = f32[8,8]{1,0} dot(%p, %p), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY %main.2 (x.1: f32[2,3,4]) -> f32[6,4] {
  %x.1 = f32[2,3,4]{2,1,0} parameter(0), metadata={op_name="x"}
  %w = f32[2,4,5]{2,1,0} constant({...})
  %f1 = f32[2,3,5]{2,1,0} fusion(%x.1, %w), kind=kCustom, calls=%fused_computation
  %f2 = f32[2,3,5]{2,1,0} fusion(%x.1, %w), kind=kCustom, calls=%fused_computation
  %sum = f32[2,3,5]{2,1,0} add(%f1, %f2)
  %zero = f32[] constant(0)
  %r = f32[2,3]{1,0} reduce(%sum, %zero), dimensions={2}, to_apply=%region_0.1
  %flat = f32[6,5]{1,0} bitcast(%sum)
  ROOT %out = f32[6,4]{1,0} fusion(%flat), kind=kCustom, calls=%fused_computation.1
}
"""  # noqa: E501 (programs as jax prints them, one instruction a line)

# Four products run: two in @main (a dot_general with batching dimensions, a stablehlo.dot) and one in
# @head, which @main calls twice; @spare is never called.
STABLEHLO = """module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4xf32>, %arg1: tensor<2x4x5xf32>) -> (tensor<6x7xf32>) {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    %1 = call @head(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %2 = func.call @head(%1) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %3 = stablehlo.reshape %0 : (tensor<2x3x5xf32>) -> tensor<6x5xf32>
    %4 = stablehlo.constant dense<1.0> : tensor<5x7xf32>
    %5 = stablehlo.dot %3, %4 : (tensor<6x5xf32>, tensor<5x7xf32>) -> tensor<6x7xf32>
    return %5 : tensor<6x7xf32>
  }
  func.func private @head(%arg0: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
    %0 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [2] x [2] : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x2x3xf32>
    %1 = stablehlo.slice %arg0 [0:2, 0:3, 0:4] : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    return %1 : tensor<2x3x4xf32>
  }
  func.func private @spare(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
"""  # noqa: E501 (programs as jax prints them, one instruction a line)


def test_hlo_products_count_each_call_of_a_computation_and_skip_uncalled_ones():
    found = products(HLO)
    assert program_kind(HLO) == "hlo"
    assert len(found) == 3
    batched = Product(2, 3, 4, 5, (2, 3, 4), (2, 4, 5), (2, 3, 5))
    assert found.count(batched) == 2
    assert Product(1, 6, 5, 4, (6, 5), (5, 4), (6, 4)) in found  # operand shapes written inline
    assert sum(p.flops for p in found) == 2 * (2 * 2 * 3 * 4 * 5) + 2 * 6 * 5 * 4
    assert str(batched) == "2 x (3 x 4) @ (4 x 5)"


def test_stablehlo_products_count_each_call_and_read_both_dot_ops():
    found = products(STABLEHLO)
    assert program_kind(STABLEHLO) == "stablehlo"
    assert Counter(p.size for p in found) == {(2, 3, 4, 5): 1, (1, 6, 5, 7): 1, (1, 6, 4, 6): 2}


def test_compare_names_what_optimisation_removed_and_brought_in():
    # one (6 x 5) @ (5 x 4) product split into two (6 x 5) @ (5 x 2) products: the same FLOPs
    root = next(line for line in HLO.splitlines() if "%dot.1 =" in line)
    half = ("f32[6,2]{1,0} dot(f32[6,5]{1,0} %param_0.1, f32[5,2]{1,0} %constant), lhs_contracting_dims={1}, "
            "rhs_contracting_dims={0}")
    split = HLO.replace(root, f"  %left = {half}\n  %right = {half}\n"
                              "  ROOT %both = f32[6,4]{1,0} concatenate(%left, %right), dimensions={1}")
    change = compare(HLO, split)
    assert (change.before, change.after) == (3, 4)
    assert change.flops_before == change.flops_after
    assert change.gone == {(1, 6, 5, 4): 1} and change.new == {(1, 6, 5, 2): 2}
    same = compare(HLO, HLO)
    assert same.before == same.after == 3 and not same.gone and not same.new


def test_bad_texts_are_refused():
    with pytest.raises(TypeError, match="text must be a str, got bytes"):
        products(HLO.encode())
    with pytest.raises(ValueError, match="text must be a program as jax prints it"):
        products("def f(x): return x @ x")
    with pytest.raises(ValueError, match="no entry computation"):
        products(STABLEHLO.replace("@main", "@first"))
    with pytest.raises(TypeError, match="programs must be a Mapping"):
        product_table([("concat", "loop", 1, 4)])
    with pytest.raises(ValueError, match=r"programs must map \(form, style, h, T\)"):
        product_table({("concat", "loop"): (HLO, HLO)})


# ------------------------------------------------------------------------------------------------------------
# the programs jax compiles (the optional jax extra)


@pytest.fixture(scope="module")
def small_programs():
    """Both forms, every style, at B 2, T 3, H 8, h 2, float32, as lowered and optimised."""
    pytest.importorskip("jax")
    from geron_lib.interop.jax_programs import compiled_programs

    return compiled_programs([3], [2], hidden_size=8, batch=2)


@pytest.mark.jax
def test_the_counts_of_both_forms_at_a_small_size(small_programs):
    # per head: X W_Q,i, X W_K,i, the values, Q_i K_i^T and A_i times the values; concat adds one product
    # with W_O. Batched: X W_Q, X W_K, the values, and one product over heads for each of the other two.
    # On this CPU backend XLA merges no product and splits none (the chapter says so).
    want = {("concat", "loop"): 5 * 2 + 1, ("concat", "vmap"): 6, ("concat", "batched"): 6,
            ("sum", "loop"): 5 * 2, ("sum", "vmap"): 5, ("sum", "batched"): 5}
    rows = product_table(small_programs)
    assert {(r["form"], r["style"]): (r["before"], r["after"]) for r in rows} == {
        key: (n, n) for key, n in want.items()}
    assert all(r["flops_before"] == r["flops_after"] and not r["gone"] and not r["new"] for r in rows)


@pytest.mark.jax
def test_the_shapes_of_the_loop_and_the_batched_concat_form(small_programs):
    B, T, H, h = 2, 3, 8, 2
    d_head = H // h
    rows = {(r["form"], r["style"]): r for r in product_table(small_programs)}
    # the loop: 3 projections per head of all B T rows, then per head and row Q_i K_i^T and A_i V_i
    assert rows["concat", "loop"]["sizes"] == {(1, B * T, H, d_head): 3 * h, (B, T, d_head, T): h,
                                               (B, T, T, d_head): h, (1, B * T, H, H): 1}
    # batched: full-width projections, and the heads (with the rows) as a batch dimension
    assert rows["concat", "batched"]["sizes"] == {(1, B * T, H, H): 4, (B * h, T, d_head, T): 1,
                                                  (B * h, T, T, d_head): 1}
    # the sum form's values, X W'_V,i for every head in one product: (B T, H) @ (H, h H)
    assert rows["sum", "batched"]["sizes"][1, B * T, H, h * H] == 1


@pytest.mark.jax
def test_vmap_makes_each_projection_one_wide_product(small_programs):
    # as traced, jax.vmap turns X W_Q,i (one head) into one product by all heads' columns at once: no batch
    # dimension, the head axis a free dimension of the weight (h, H, d_head); only the scores and the
    # weighted values carry the heads (with the rows of the batch) as a batch dimension
    B, T, H, h = 2, 3, 8, 2
    d_head = H // h
    traced = products(small_programs["concat", "vmap", h, T][0])
    projections = [p for p in traced if p.rhs == (h, H, d_head)]
    assert len(projections) == 3
    assert {p.size for p in projections} == {(1, B * T, H, h * d_head)}
    batched = sorted(p.size for p in traced if p.batch > 1)
    assert batched == sorted([(B * h, T, d_head, T), (B * h, T, T, d_head)])
    assert len(traced) == 3 + 2 + 1  # and W_O once


@pytest.mark.jax
def test_the_counts_over_more_numbers_of_heads():
    # the loop keeps 5 products per head (and W_O once in the concat form) after optimisation; the batched
    # form and jax.vmap keep the same number at every h compiled (here d_head = 8 and 3)
    pytest.importorskip("jax")
    from geron_lib.interop.jax_programs import compiled_programs

    h_values = [3, 8]  # beyond the chapter's 1, 2 and 4
    rows = {(r["form"], r["style"], r["h"]): (r["before"], r["after"])
            for r in product_table(compiled_programs([4], h_values, hidden_size=24))}
    for h in h_values:
        assert rows["concat", "loop", h] == (5 * h + 1,) * 2 and rows["sum", "loop", h] == (5 * h,) * 2
        assert rows["concat", "batched", h] == rows["concat", "vmap", h] == (6, 6)
        assert rows["sum", "batched", h] == rows["sum", "vmap", h] == (5, 5)


@pytest.mark.jax
def test_at_one_number_per_head_the_scores_are_no_product():
    # d_head = 1: Q_i K_i^T contracts over one number, and XLA writes it as an elementwise product, so the
    # optimised loop keeps one product per head fewer (the only h at which optimisation changes a count)
    pytest.importorskip("jax")
    from geron_lib.interop.jax_programs import compiled_programs

    rows = {(r["form"], r["style"]): (r["before"], r["after"])
            for r in product_table(compiled_programs([4], [6], hidden_size=6))}
    assert rows["concat", "loop"] == (5 * 6 + 1, 4 * 6 + 1)
    assert rows["concat", "batched"] == rows["concat", "vmap"] == (6, 5)
