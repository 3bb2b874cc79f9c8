"""The recommendation rules, one module per family of evidence (step time, CPU, devices, PyTorch)."""
