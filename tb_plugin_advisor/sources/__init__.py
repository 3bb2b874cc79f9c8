"""Where runs come from: discovery of profile sessions, TensorBoard run markers, run lookup, doctor."""
