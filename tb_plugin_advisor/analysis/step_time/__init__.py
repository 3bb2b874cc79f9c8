"""Where each step's time goes: steps (on the host or the device clock), the per-step breakdown into
categories, the verdict, input pipelines (tf.data, the DataLoader, user annotations), host syncs,
op tables and the PyTorch signals the rules read.

It owns measuring one host's steps and their time. It does not name events (classify/), pool hosts
(report/combine.py) or give advice (advice/); the words of each category live in categories.py, the
one table the tab and the exports read too.
"""
