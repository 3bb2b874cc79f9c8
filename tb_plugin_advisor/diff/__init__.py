"""Two report JSONs compared: what changed per step, per category and per op, and whether it is real."""
