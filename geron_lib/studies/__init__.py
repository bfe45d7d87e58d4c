"""What the chapters measure or reconstruct: factorised tables, depth under sharing, the ALBERT paper's
tables, attention conversions and timings, the masking experiment. Imports model and pretraining only."""
