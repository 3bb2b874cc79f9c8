"""One run's report: its hosts analysed and advised, pooled once, as the JSON contract
(ARCHITECTURE.md §2)."""
