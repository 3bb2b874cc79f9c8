"""The XSpace reader (.xplane.pb, TensorFlow and JAX): a protobuf wire walker that builds the
Profile's columns."""
