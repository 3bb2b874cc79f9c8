"""The PyTorch profiler (Kineto) trace reader: chrome-trace JSON (`*.pt.trace.json[.gz]`) into the same
Profile as XSpace.

It owns decoding one trace within the guarded I/O layer's caps (bounded load, typed msgspec decoding,
hostile values refused with the file's name), the trace's head (its time range, read without the
whole file) and the capture grouping of its files (which traces are one job's ranks). It does not
know what events mean (analysis/classify/) or which files a run holds (sources/).
"""
