"""The deeper views of one profile: kernel statistics and occupancy, memory over time and its peaks,
collectives (exposed vs hidden, sizes, bandwidth), FLOPs per op and the roofline with MFU.

It owns the measurement of each view for one host's Profile, columnar (numpy) wherever a view walks
every event. It does not pool hosts (report/combine.py), judge what a view means for the user
(the findings are advice/rules/ records) or write JSON beyond each view's own `to_json`.
"""
