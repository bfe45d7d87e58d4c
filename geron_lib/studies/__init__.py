"""What the chapters measure or reconstruct: factorised tables, depth under sharing, the ALBERT paper's
tables, attention conversions and timings (numpy's, and the jitted JAX forms' in ``jax_timing``), the
masking experiment, the Trainer's gap to numpy (``hf_gap``), the trade-off grid (``tradeoffs``), and the
stored results of the longer runs (``stored``, their one reader). Imports the layers below it only."""
