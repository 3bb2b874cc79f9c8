"""The XSpace reader (.xplane.pb, TensorFlow and JAX): a protobuf wire walker that builds the
Profile's columns."""

XPLANE_SUFFIX = ".xplane.pb"  # a file with this ending is one host's XSpace profile
FORMAT_ID = "xplane"  # Profile.format and Session.format of an XSpace (readers/formats/xspace.py)
