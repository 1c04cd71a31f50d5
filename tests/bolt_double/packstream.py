"""PackStream v1, the value encoding of Bolt: what the neo4j driver sends and what it reads back.

Written here, not borrowed from the driver's private codec, so that the double checks the driver's bytes
independently. Covers every type the gate sends or receives: null, booleans, integers, floats, strings, bytes,
lists, maps and structures (messages; Node, Relationship, UnboundRelationship and Path in results)."""

import struct
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Structure:
    tag: int
    fields: tuple[Any, ...] = field(default_factory=tuple)


# Bolt 5 graph structures (element ids are strings; the legacy integer ids stay alongside).
NODE, RELATIONSHIP, UNBOUND_RELATIONSHIP, PATH = 0x4E, 0x52, 0x72, 0x50


def node(id_: int, labels: list[str], properties: dict[str, Any]) -> Structure:
    return Structure(NODE, (id_, labels, properties, str(id_)))


def relationship(id_: int, start: int, end: int, type_: str, properties: dict[str, Any]) -> Structure:
    return Structure(RELATIONSHIP, (id_, start, end, type_, properties, str(id_), str(start), str(end)))


def unbound_relationship(id_: int, type_: str, properties: dict[str, Any]) -> Structure:
    return Structure(UNBOUND_RELATIONSHIP, (id_, type_, properties, str(id_)))


def path(nodes: list[Structure], rels: list[Structure], indices: list[int]) -> Structure:
    return Structure(PATH, (nodes, rels, indices))


class PackStreamError(ValueError):
    pass


def _sized(out: bytearray, size: int, tiny: int, markers: tuple[int, int, int]) -> None:
    if size < 0x10:
        out.append(tiny + size)
    elif size < 0x100:
        out += bytes((markers[0], size))
    elif size < 0x10000:
        out.append(markers[1])
        out += struct.pack(">H", size)
    else:
        out.append(markers[2])
        out += struct.pack(">I", size)


def pack(value: Any, out: bytearray | None = None) -> bytearray:
    out = bytearray() if out is None else out
    if value is None:
        out.append(0xC0)
    elif value is True:
        out.append(0xC3)
    elif value is False:
        out.append(0xC2)
    elif isinstance(value, int):
        if -0x10 <= value < 0x80:
            out += struct.pack(">b", value)
        elif -0x80 <= value < 0x80:
            out += b"\xc8" + struct.pack(">b", value)
        elif -0x8000 <= value < 0x8000:
            out += b"\xc9" + struct.pack(">h", value)
        elif -0x80000000 <= value < 0x80000000:
            out += b"\xca" + struct.pack(">i", value)
        elif -0x8000000000000000 <= value < 0x8000000000000000:
            out += b"\xcb" + struct.pack(">q", value)
        else:
            raise PackStreamError(f"integer out of 64-bit range: {value}")
    elif isinstance(value, float):
        out += b"\xc1" + struct.pack(">d", value)
    elif isinstance(value, str):
        data = value.encode("utf-8")
        _sized(out, len(data), 0x80, (0xD0, 0xD1, 0xD2))
        out += data
    elif isinstance(value, bytes | bytearray):
        if len(value) < 0x100:
            out += bytes((0xCC, len(value)))
        elif len(value) < 0x10000:
            out += b"\xcd" + struct.pack(">H", len(value))
        else:
            out += b"\xce" + struct.pack(">I", len(value))
        out += value
    elif isinstance(value, list | tuple):
        _sized(out, len(value), 0x90, (0xD4, 0xD5, 0xD6))
        for item in value:
            pack(item, out)
    elif isinstance(value, dict):
        _sized(out, len(value), 0xA0, (0xD8, 0xD9, 0xDA))
        for key, item in value.items():
            pack(str(key), out)
            pack(item, out)
    elif isinstance(value, Structure):
        if len(value.fields) >= 0x10:
            raise PackStreamError("structures have at most 15 fields")
        out.append(0xB0 + len(value.fields))
        out.append(value.tag)
        for item in value.fields:
            pack(item, out)
    else:
        raise PackStreamError(f"cannot pack {type(value).__name__}")
    return out


class Unpacker:
    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self._at = 0

    def _take(self, n: int) -> bytes:
        if self._at + n > len(self._data):
            raise PackStreamError("truncated value")
        chunk = bytes(self._data[self._at : self._at + n])
        self._at += n
        return chunk

    def _number(self, fmt: str) -> int:
        return struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]

    def _size(self, marker: int, tiny: int, sized: tuple[int, int, int]) -> int | None:
        if tiny <= marker < tiny + 0x10:
            return marker - tiny
        for fmt, m in zip((">B", ">H", ">I"), sized, strict=True):
            if marker == m:
                return self._number(fmt)
        return None

    def unpack(self) -> Any:
        marker = self._take(1)[0]
        if marker < 0x80:
            return marker
        if marker >= 0xF0:
            return marker - 0x100
        simple = {0xC0: None, 0xC2: False, 0xC3: True}
        if marker in simple:
            return simple[marker]
        ints = {0xC8: ">b", 0xC9: ">h", 0xCA: ">i", 0xCB: ">q"}
        if marker in ints:
            return self._number(ints[marker])
        if marker == 0xC1:
            return struct.unpack(">d", self._take(8))[0]
        if marker in (0xCC, 0xCD, 0xCE):
            return self._take(self._number({0xCC: ">B", 0xCD: ">H", 0xCE: ">I"}[marker]))
        if (size := self._size(marker, 0x80, (0xD0, 0xD1, 0xD2))) is not None:
            return self._take(size).decode("utf-8")
        if (size := self._size(marker, 0x90, (0xD4, 0xD5, 0xD6))) is not None:
            return [self.unpack() for _ in range(size)]
        if (size := self._size(marker, 0xA0, (0xD8, 0xD9, 0xDA))) is not None:
            result = {}
            for _ in range(size):
                key = self.unpack()
                if not isinstance(key, str):
                    raise PackStreamError("map keys are strings")
                result[key] = self.unpack()
            return result
        if 0xB0 <= marker < 0xC0:
            tag = self._take(1)[0]
            return Structure(tag, tuple(self.unpack() for _ in range(marker - 0xB0)))
        raise PackStreamError(f"unknown marker 0x{marker:02X}")

    def done(self) -> bool:
        return self._at == len(self._data)


def unpack(data: bytes) -> Any:
    unpacker = Unpacker(data)
    value = unpacker.unpack()
    if not unpacker.done():
        raise PackStreamError("trailing bytes after a value")
    return value
