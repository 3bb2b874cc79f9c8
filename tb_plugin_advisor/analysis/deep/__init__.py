"""The deeper views: kernel statistics, memory over time, collectives, FLOPs and the roofline."""
