"""What a name or a device means: the tables and vectorised classifiers every analysis reads names
through, and the devices' peaks.

It owns every pattern that says what an event, kernel, op or allocator name means (event_names.py
for the host/device timeline categories and collective kinds, torch_names.py for PyTorch's own
names, allocator_names.py for memory allocators, onednn_ops.py and tf_data_names.py for TF's, the
kernel families and precision groups in patterns.py), so a name is read one way everywhere. It
does not own how a reader parses a file (the readers' format regexes stay with them), nor what is
measured from the names it classifies (step_time/, precision/, deep/).
"""
