"""The HTTP side of the Advisor tab: routes, the analysis workers and their progress, JSON errors.

It owns answering requests safely: run names only from discovery, worker processes with timeouts and
progress, bounded caches, the trace route that streams only checked profiles, and 4xx/500 JSON
answers with an error id. It analyses nothing in the server thread and renders no report itself.
"""
