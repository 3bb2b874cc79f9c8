"""Evidence spans: the few events of a profile that show a finding, in the trace file's own coordinates."""
