"""How the Advisor's own process uses memory while it reads and analyses a profile.

It owns two process-wide settings that change no result: the C library's heap limits and the
returning of freed pages to the system (heap.py), and Python's cyclic collector paused during the
outermost read or analysis (gc_pause.py); the names a read keeps, made again so that they fill
the allocator's pools on their own (packed_strings.py); and how much the process holds now
(resident.py), which the server's workers ask after each analysis; and that the worker processes
the Advisor starts end with the process that started them, holding nothing after it is gone
(orphans.py). Readers and analyses wrap their outermost call in these; nothing here knows what a
profile is, and nothing about the model or the analyses lives here.
"""
