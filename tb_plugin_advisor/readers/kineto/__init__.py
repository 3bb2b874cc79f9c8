"""The PyTorch profiler (Kineto) trace reader: chrome-trace JSON into the same Profile as XSpace."""
