"""Whether bytes are an XSpace, checked as they stream by and without decoding them: what the trace
route asks before it serves a `.xplane.pb` (readers/profile_check.py).

The top-level fields must be XSpace's own (planes=1, errors=2, warnings=3, hostnames=4, all
length-delimited) and tile the bytes exactly, with at least one plane; the first PLANE_HEAD bytes of
each plane must be XPlane fields of the right wire type (id=1 a varint; name=2, lines=3,
event_metadata=4, stat_metadata=5, stats=6 length-delimited). Text, a key file or another protobuf
(a GraphDef's nodes are length-delimited field 1 too, but a NodeDef starts with a string where an
XPlane has its varint id) fails within its first bytes. Memory is a few hundred bytes whatever the
file's size: only field headers and each plane's head are kept.
"""

from __future__ import annotations

from typing import Iterator, Optional, Tuple

from tb_plugin_advisor.errors import ProfileReadError

SPACE_FIELDS = (1, 2, 3, 4)
PLANE_WIRE_TYPES = {1: 0, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2}
PLANE_HEAD = 256  # bytes of each plane whose fields are checked
LONGEST_HEADER = 20  # a field key and a length: two varints of at most 10 bytes


def _varint(data: bytes, at: int) -> Optional[Tuple[int, int]]:
    """(value, position after it), or None when `data` ends inside it (or it runs past 10 bytes)."""
    value = shift = 0
    for pos in range(at, min(len(data), at + 10)):
        value |= (data[pos] & 0x7F) << shift
        if data[pos] < 0x80:
            return value, pos + 1
        shift += 7
    return None


class XSpaceShape:
    """Feed the bytes with `feed()` in order, then call `finish()`; either raises ProfileReadError
    naming what is not an XSpace."""

    def __init__(self, source: str):
        self.source = source
        self.at = 0  # bytes fed so far
        self.planes = 0
        self._header = bytearray()  # the key and length of the next top-level field, as they come
        self._left = 0  # bytes of the current field's value not yet fed
        self._plane: Optional[bytearray] = None  # the current plane's head, while it is gathered
        self._plane_head = 0  # how many bytes of the current plane are checked

    def _refuse(self, why: str) -> ProfileReadError:
        return ProfileReadError(self.source, f"not an XSpace profile ({why})")

    def feed(self, piece: bytes) -> None:
        at = 0
        while at < len(piece):
            if self._left:
                take = min(self._left, len(piece) - at)
                if self._plane is not None:
                    self._plane += piece[at : at + min(take, self._plane_head - len(self._plane))]
                    if len(self._plane) == self._plane_head:
                        self._check_plane()
                self._left -= take
                at += take
                continue
            self._header.append(piece[at])
            at += 1
            self._start_field()
        self.at += len(piece)

    def _start_field(self) -> None:
        """Read the next top-level field's header once all its bytes are there."""
        key = _varint(self._header, 0)
        length = key and _varint(self._header, key[1])
        if not length:
            if len(self._header) >= LONGEST_HEADER:
                raise self._refuse("a field header longer than 20 bytes")
            return
        number, wire_type = key[0] >> 3, key[0] & 7
        if wire_type != 2 or number not in SPACE_FIELDS:
            raise self._refuse(f"field {number}, wire type {wire_type} at byte {self.at}")
        self._header.clear()
        self._left = length[0]
        self._plane = None
        if number == 1:
            self.planes += 1
            self._plane = bytearray()
            self._plane_head = min(length[0], PLANE_HEAD)
            if not self._plane_head:
                self._plane = None

    def _check_plane(self) -> None:
        """The plane's head: whole fields of XPlane's numbers and wire types, up to where it is cut."""
        head, self._plane = bytes(self._plane or b""), None
        pos = 0
        while pos < len(head):
            key = _varint(head, pos)
            if key is None:
                return  # cut inside a key: the head ends here
            number, wire_type = key[0] >> 3, key[0] & 7
            if PLANE_WIRE_TYPES.get(number) != wire_type:
                raise self._refuse(f"plane {self.planes} holds field {number}, wire type {wire_type}, "
                                   "which no XPlane has")
            value = _varint(head, key[1])
            if value is None:
                return
            pos = value[1] + (value[0] if wire_type == 2 else 0)

    def finish(self) -> None:
        if self._left or self._header:
            raise self._refuse(f"the bytes end inside a field, at byte {self.at}")
        if not self.planes:
            raise self._refuse("no plane")


def check_xspace(pieces: Iterator[bytes], source: str) -> None:
    """None when the bytes (a piece at a time) have XSpace's shape from first to last; ProfileReadError
    naming what is not an XSpace otherwise. The XSpace format's content check (readers/formats/)."""
    shape = XSpaceShape(source)
    for piece in pieces:
        shape.feed(piece)
    shape.finish()
