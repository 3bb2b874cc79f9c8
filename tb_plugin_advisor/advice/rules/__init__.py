"""The rule records, one module per family (input pipeline, compilation, device, precision, optimizer,
profile, kernels, memory, collectives, roofline): each lists its `Rule` records in `RULES`, which
advice/registry.py gathers. A new rule is one record in its family's module and its tests."""
