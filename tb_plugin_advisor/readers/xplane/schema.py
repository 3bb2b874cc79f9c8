"""The XSpace protobuf schema, built at run time from field numbers.

TensorFlow is the only package that ships a generated `xplane_pb2`, and generated modules are tied to
the protoc that made them (a module from protobuf 7 refuses to load under protobuf 4). Building the
descriptors here works with every protobuf runtime that tensorboard accepts (4.x–7.x) and never needs
TensorFlow. Field numbers are those of tsl/profiler/protobuf/xplane.proto.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "tb_plugin_advisor.xspace"

_F = descriptor_pb2.FieldDescriptorProto
_OPTIONAL, _REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_TYPES = {
    "int64": _F.TYPE_INT64,
    "uint64": _F.TYPE_UINT64,
    "double": _F.TYPE_DOUBLE,
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
}

# message -> [(field name, number, type or message name, repeated, oneof name or "")]
SCHEMA: Dict[str, List[Tuple[str, int, str, bool, str]]] = {
    "XSpace": [
        ("planes", 1, "XPlane", True, ""),
        ("errors", 2, "string", True, ""),
        ("warnings", 3, "string", True, ""),
        ("hostnames", 4, "string", True, ""),
    ],
    "XPlane": [
        ("id", 1, "int64", False, ""),
        ("name", 2, "string", False, ""),
        ("lines", 3, "XLine", True, ""),
        ("event_metadata", 4, "XPlane.EventMetadataEntry", True, ""),
        ("stat_metadata", 5, "XPlane.StatMetadataEntry", True, ""),
        ("stats", 6, "XStat", True, ""),
    ],
    "XLine": [
        ("id", 1, "int64", False, ""),
        ("display_id", 10, "int64", False, ""),
        ("name", 2, "string", False, ""),
        ("display_name", 11, "string", False, ""),
        ("timestamp_ns", 3, "int64", False, ""),
        ("duration_ps", 9, "int64", False, ""),
        ("events", 4, "XEvent", True, ""),
    ],
    # An XLine seen as its raw events (other fields kept as unknown): the runtime splits the events
    # in C, and the reader decodes them with numpy (readers/xplane/event_columns.py).
    "XLineRawEvents": [
        ("events", 4, "bytes", True, ""),
    ],
    "XEvent": [
        ("metadata_id", 1, "int64", False, ""),
        ("offset_ps", 2, "int64", False, "data"),
        ("num_occurrences", 5, "int64", False, "data"),
        ("duration_ps", 3, "int64", False, ""),
        ("stats", 4, "XStat", True, ""),
    ],
    "XStat": [
        ("metadata_id", 1, "int64", False, ""),
        ("double_value", 2, "double", False, "value"),
        ("uint64_value", 3, "uint64", False, "value"),
        ("int64_value", 4, "int64", False, "value"),
        ("str_value", 5, "string", False, "value"),
        ("bytes_value", 6, "bytes", False, "value"),
        ("ref_value", 7, "uint64", False, "value"),
    ],
    "XEventMetadata": [
        ("id", 1, "int64", False, ""),
        ("name", 2, "string", False, ""),
        ("display_name", 4, "string", False, ""),
        ("metadata", 3, "bytes", False, ""),
        ("stats", 5, "XStat", True, ""),
        ("child_id", 6, "int64", True, ""),
    ],
    "XStatMetadata": [
        ("id", 1, "int64", False, ""),
        ("name", 2, "string", False, ""),
        ("description", 3, "string", False, ""),
    ],
}

# map<int64, V> fields of XPlane, expressed as protobuf's nested MapEntry messages.
MAP_ENTRIES = {"EventMetadataEntry": "XEventMetadata", "StatMetadataEntry": "XStatMetadata"}


def encode_varint(value: int) -> bytes:
    """A protobuf varint (negative int64 values as their 64-bit two's complement, as protobuf does)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if not value:
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def _add_field(message: descriptor_pb2.DescriptorProto, name: str, number: int, type_name: str,
               repeated: bool, oneof_index=None) -> None:
    field = message.field.add(name=name, number=number, label=_REPEATED if repeated else _OPTIONAL)
    if type_name in _TYPES:
        field.type = _TYPES[type_name]
    else:
        field.type = _F.TYPE_MESSAGE
        field.type_name = f".{PACKAGE}.{type_name}"
    if oneof_index is not None:
        field.oneof_index = oneof_index


def _file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    file_proto = descriptor_pb2.FileDescriptorProto(
        name="tb_plugin_advisor/xspace.proto", package=PACKAGE, syntax="proto3"
    )
    for message_name, fields in SCHEMA.items():
        message = file_proto.message_type.add(name=message_name)
        oneofs: Dict[str, int] = {}
        for name, number, type_name, repeated, oneof in fields:
            index = None
            if oneof:
                if oneof not in oneofs:
                    oneofs[oneof] = len(oneofs)
                    message.oneof_decl.add(name=oneof)
                index = oneofs[oneof]
            _add_field(message, name, number, type_name, repeated, index)
        if message_name == "XPlane":
            for entry_name, value_type in MAP_ENTRIES.items():
                entry = message.nested_type.add(name=entry_name)
                entry.options.map_entry = True
                _add_field(entry, "key", 1, "int64", False)
                _add_field(entry, "value", 2, value_type, False)
    return file_proto


def _message_classes() -> Dict[str, type]:
    pool = descriptor_pool.DescriptorPool()  # private: never clashes with TensorFlow's own XSpace
    # AddSerializedFile exists with the same meaning in every runtime (python, cpp, upb) from 4.x to 7.x.
    pool.AddSerializedFile(_file_descriptor().SerializeToString())
    file_descriptor = pool.FindFileByName("tb_plugin_advisor/xspace.proto")
    classes = {}
    for name in SCHEMA:
        descriptor = file_descriptor.message_types_by_name[name]
        if hasattr(message_factory, "GetMessageClass"):
            classes[name] = message_factory.GetMessageClass(descriptor)
        else:  # protobuf < 4.22
            classes[name] = message_factory.MessageFactory(pool).GetPrototype(descriptor)
    return classes


_CLASSES = _message_classes()
XSpace = _CLASSES["XSpace"]
XPlane = _CLASSES["XPlane"]
XLine = _CLASSES["XLine"]
XEvent = _CLASSES["XEvent"]
XLineRawEvents = _CLASSES["XLineRawEvents"]
XStat = _CLASSES["XStat"]
XEventMetadata = _CLASSES["XEventMetadata"]
XStatMetadata = _CLASSES["XStatMetadata"]
