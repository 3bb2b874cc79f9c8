"""Numeric types per unit of work: precision shares, the mixed-precision verdict, Tensor Core and
matrix-core use and eligibility, and 16-bit math on CPUs (TensorFlow and PyTorch host ops).

It owns one precision result type and how each kind of profile (device kernels, TF CPU ops, PyTorch
aten ops) fills it. What a kernel or dtype name means is classify/'s; the advice on precision is the
precision family's rule records (advice/rules/precision.py).
"""
