"""Where each step's time goes: steps, the breakdown, the verdict, input pipelines, host syncs, op tables."""
