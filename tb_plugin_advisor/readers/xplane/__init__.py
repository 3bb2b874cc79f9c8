"""The XSpace reader (.xplane.pb, TensorFlow and JAX): a protobuf wire walker that builds the
Profile's columns.

It owns decoding one host's XSpace exactly as the protobuf runtime would (a C walker where a compiler
was there, numpy otherwise), a line window at a time, within the guarded I/O layer's caps. It does not
know what events mean (analysis/classify/) or which files a run holds (sources/).
"""

XPLANE_SUFFIX = ".xplane.pb"  # a file with this ending is one host's XSpace profile
FORMAT_ID = "xplane"  # Profile.format and Session.format of an XSpace (readers/formats/xspace.py)
