"""Hand-made compiled programs with a known number of matrix products, as jax prints them: StableHLO as
lowered and HLO after optimisation, for the tests of what the chapter shows of them (no jax needed)."""

from __future__ import annotations


def lowered(n: int) -> str:
    """StableHLO whose @main runs ``n`` products x @ w, (4 x 8) @ (8 x 8)."""
    dots = "".join(f"    %{i} = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
                   f"(tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>\n" for i in range(n))
    return (f"module @jit_f attributes {{mhlo.num_partitions = 1 : i32}} {{\n"
            f"  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8x8xf32>) -> "
            f"(tensor<4x8xf32>) {{\n"
            f"{dots}    return %0 : tensor<4x8xf32>\n  }}\n}}\n")


def optimised(n: int) -> str:
    """HLO whose ENTRY runs ``n`` products x @ w, each with its layout and metadata, as XLA prints them."""
    dots = "".join(f"  %dot.{i} = f32[4,8]{{1,0}} dot(%x, %w), lhs_contracting_dims={{1}}, "
                   f"rhs_contracting_dims={{0}}, metadata={{op_name=\"jit(f)/dot_general\" "
                   f"stack_frame_id=3}}\n"
                   for i in range(n))
    return ("HloModule jit_f, is_scheduled=true\n\n"
            "ENTRY %main.1 (x: f32[4,8], w: f32[8,8]) -> f32[4,8] {\n"
            "  %x = f32[4,8]{1,0} parameter(0), metadata={op_name=\"x\"}\n"
            "  %w = f32[8,8]{1,0} parameter(1)\n"
            f"{dots}  ROOT %out = f32[4,8]{{1,0}} copy(%x)\n}}\n")


def programs(counts: dict[tuple[str, str, int, int], int | tuple[int, int]]) -> dict:
    """{(form, style, h, T): (lowered, optimised)} with the given number of products (one number: the same
    before and after optimisation; a pair: before, after)."""
    pairs = {key: n if isinstance(n, tuple) else (n, n) for key, n in counts.items()}
    return {key: (lowered(before), optimised(after)) for key, (before, after) in pairs.items()}
