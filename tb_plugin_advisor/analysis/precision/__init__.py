"""Numeric types per unit of work, mixed precision, Tensor Cores and matrix cores, 16-bit math on CPUs."""
