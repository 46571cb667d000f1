"""String constants of a compiled Java class, read from a jar without a JVM.

The COCO caption toolkit's tokenizer is a JFlex scanner whose DFA tables are compiled into its class
as ``static final String`` constants (``ZZ_CMAP_PACKED``, ``ZZ_TRANS_PACKED_0``...).
:mod:`vlbench.engine.captions.ptb` reads them from the jar pycocoevalcap installs, so the Python
tokenizer runs the very automaton the jar runs. This module knows only the class-file format (JVM
specification, chapter 4): the constant pool, and each field's ``ConstantValue`` attribute.
"""

from __future__ import annotations

import struct
import sys
import zipfile
from array import array
from os import PathLike

__all__ = ["string_constants"]

# constant-pool tags -> the bytes their entry takes after the tag (UTF8 entries are read by length)
_SIZES = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4,
          19: 2, 20: 2}


def _utf16_units(data: bytes) -> list[int]:
    """Java's modified UTF-8 -> the string's UTF-16 code units (a char table may hold any 16-bit
    value). It is UTF-8 but for NUL, written C0 80, and each surrogate encoded on its own (3 bytes),
    which Python's decoder reads with ``surrogatepass`` as one code point per surrogate: a C-speed
    decode instead of a loop per byte."""
    text = data.replace(b"\xc0\x80", b"\x00").decode("utf-8", errors="surrogatepass")
    return (
        array("H", text.encode("utf-16-le", errors="surrogatepass")).tolist()
        if sys.byteorder == "little"
        else [ord(c) for c in text]
    )


def string_constants(jar: str | PathLike, class_name: str) -> dict[str, list[int]]:
    """Every ``static final String`` field of ``class_name`` (``a/b/C``) in ``jar`` with a constant
    value, as UTF-16 code units."""
    data = zipfile.ZipFile(jar).read(class_name + ".class")
    if data[:4] != b"\xca\xfe\xba\xbe":
        raise ValueError(f"{class_name}.class in {jar} is not a Java class file")
    count = struct.unpack(">H", data[8:10])[0]
    pool: list[tuple[int, object] | None] = [None] * count
    i, k = 10, 1
    while k < count:
        tag = data[i]
        if tag == 1:
            length = struct.unpack(">H", data[i + 1:i + 3])[0]
            pool[k] = (1, data[i + 3:i + 3 + length])
            i += 3 + length
        else:
            pool[k] = (tag, data[i + 1:i + 1 + _SIZES[tag]])
            i += 1 + _SIZES[tag]
        k += 2 if tag in (5, 6) else 1          # long and double take two slots
    i += 6                                       # access flags, this class, super class
    i += 2 + 2 * struct.unpack(">H", data[i:i + 2])[0]        # interfaces
    fields: dict[str, list[int]] = {}
    n_fields = struct.unpack(">H", data[i:i + 2])[0]
    i += 2
    for _ in range(n_fields):
        _, name, _, attributes = struct.unpack(">HHHH", data[i:i + 8])
        i += 8
        for _ in range(attributes):
            attr_name, length = struct.unpack(">HI", data[i:i + 6])
            body = data[i + 6:i + 6 + length]
            i += 6 + length
            entry = (
                pool[struct.unpack(">H", body)[0]]
                if pool[attr_name] == (1, b"ConstantValue")
                else None
            )
            if entry is not None and entry[0] == 8:           # a String constant: its UTF8 entry
                text = pool[struct.unpack(">H", entry[1])[0]]
                fields[pool[name][1].decode()] = _utf16_units(text[1])
    return fields
