"""Values a cache keeps, written as data and read back without running anything the data names.

pinshift's caches hold plain values: dataclasses and enums of pinshift's own, tuples, lists, dicts,
frozensets, bytes, strings and numbers. A `Codec` is made with the classes (and named constants) one cache
may hold, its allowlist, and turns such a value into a zlib-compressed payload: a 4-byte length, that
many bytes of JSON, then the bytes values one after another (a file's bytes are copied, not escaped:
reading them back costs a slice). The JSON spells:

    str, int, float, bool, None    as JSON has them
    list                            [items]
    tuple                           {"t": [items]}
    dict                            {"d": [[key, value], ...]}      keys any value the codec takes
    frozenset                       {"s": [items]}
    bytes                           {"b": length}                   the next `length` bytes after the JSON
    an allowlisted enum member      {"<Class>": "<member name>"}
    an allowlisted dataclass        {"<Class>": [its __dict__'s values, in the order the allowlist fixed]}
    an object met before            {"r": n}                        the n-th dataclass object of the value to be
                                                                    complete, so an object shared is shared again
    an allowlisted constant         {"k": "<name>"}

Reading one back is one `json.loads` whose object hook sees each JSON object, innermost first: it looks a
class up by name in the allowlist only, makes the object with `object.__new__` and sets its attributes
from the decoded fields, as pickle would, but nothing the data names is ever imported, called or looked
up anywhere else: no constructor, no `__setstate__`, no `__reduce__`. An enum member is looked up by
name in its class's members, and each field's value must have one of the types its annotation names (the
outer ones: `list[Warning]` is a list). Anything else (a tag or class the allowlist lacks, a dataclass
with the wrong number of fields or a field of another type, a damaged or truncated payload, JSON nesting
too deep, bytes past the end or left over) is `Undecodable`, which a cache treats as a miss. A value the codec cannot
write (a class outside the allowlist, an object whose attributes differ from its class's) is `Unencodable`:
the cache does not keep it.

Why not pickle: loading a pickle calls whatever callables it names (`os.system` among them), so a cache
file anyone else could write, or a cache folder copied from elsewhere, would run code. The JSON here
cannot (tests/test_security_caches.py writes such records into every store).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import struct
import zlib
from collections.abc import Iterable, Mapping
from typing import Any

_TAGS = frozenset("bdkrst")  # one-letter tags; class names start with a capital letter
_SCALARS = frozenset((str, int, float, bool, type(None)))  # JSON's own (exact types: an enum of str is not one)
_LENGTH = struct.Struct(">I")  # the JSON's length; the bytes values follow, in the order the JSON names them


class Undecodable(Exception):
    """A payload that is not a value this codec wrote with its allowlist: a cache miss."""


class Unencodable(Exception):
    """A value holding something outside the allowlist: not remembered."""


class Codec:
    """Encode and decode values whose objects are instances of `classes` (dataclasses or enums, named by their
    `__name__`, each name once) or one of `constants` (name -> object)."""

    def __init__(self, classes: Iterable[type], constants: Mapping[str, object] | None = None):
        self._classes: dict[str, tuple[type, Any]] = {}  # name -> (class, its fields, or an enum's members by name)
        self._names: dict[type, tuple[str, tuple[str, ...] | None]] = {}
        self._kinds: dict[type, tuple] = {}  # dataclass -> per field, the types its value may have (None: any)
        for cls in classes:
            name = cls.__name__
            if not name[:1].isupper() or name in self._classes:
                raise ValueError(f"{name}: a class of a codec needs a capitalised name of its own")
            if isinstance(cls, type) and issubclass(cls, enum.Enum):
                fields = None
            elif dataclasses.is_dataclass(cls):
                fields = _attributes(cls)
            else:
                raise ValueError(f"{name}: a codec takes dataclasses and enums only")
            self._classes[name] = (cls, dict(cls.__members__) if fields is None else fields)
            self._names[cls] = (name, fields)
        names = {cls.__name__: cls for cls in self._names} | _PLAIN
        for cls, (_, fields) in self._names.items():
            if fields is not None:
                self._kinds[cls] = tuple(_kinds(field, names, cls) for field in dataclasses.fields(cls))
        self._constants = dict(constants or {})
        self._constant_names = {id(value): name for name, value in self._constants.items()}

    # --- writing ---

    def encode(self, value: Any) -> bytes:
        """`value` as compressed JSON; Unencodable when it holds anything outside the allowlist."""
        seen: dict[int, int] = {}
        blobs: list[bytes] = []
        try:
            data = self._data(value, seen, blobs)
        except RecursionError:
            raise Unencodable("nested too deep") from None
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), check_circular=False)
        structure = text.encode("utf-8", "surrogatepass")
        return zlib.compress(b"".join((_LENGTH.pack(len(structure)), structure, *blobs)), 1)

    def _data(self, value: Any, seen: dict[int, int], blobs: list[bytes]) -> Any:
        kind = type(value)
        if kind is str or kind is int or value is None or kind is bool or kind is float:
            return value
        if kind is list:
            return [item if type(item) in _SCALARS else self._data(item, seen, blobs) for item in value]
        if kind is bytes:
            blobs.append(value)
            return {"b": len(value)}
        if kind is tuple:
            return {"t": [item if type(item) in _SCALARS else self._data(item, seen, blobs) for item in value]}
        if kind is dict:
            return {"d": [[self._data(k, seen, blobs), self._data(v, seen, blobs)] for k, v in value.items()]}
        if kind is frozenset:
            return {"s": [item if type(item) in _SCALARS else self._data(item, seen, blobs) for item in value]}
        constant = self._constant_names.get(id(value))
        if constant is not None:
            return {"k": constant}
        known = self._names.get(kind)
        if known is None:
            raise Unencodable(f"{kind.__module__}.{kind.__qualname__} is not a value this cache keeps")
        name, fields = known
        if fields is None:
            return {name: value.name}
        number = seen.get(id(value))
        if number is not None:
            return {"r": number}
        attributes = value.__dict__
        if len(attributes) != len(fields):
            raise Unencodable(f"{name} with attributes {sorted(attributes)}")
        try:
            data = {name: [self._data(attributes[field], seen, blobs) for field in fields]}
        except KeyError:
            raise Unencodable(f"{name} with attributes {sorted(attributes)}") from None
        seen[id(value)] = len(seen)  # numbered when complete, as reading completes them (a cycle never is)
        return data

    # --- reading ---

    def decode(self, payload: bytes) -> Any:
        """The value `encode` wrote; Undecodable for anything else (never another exception)."""
        try:
            whole = zlib.decompress(payload)
            (length,) = _LENGTH.unpack_from(whole)
            start = _LENGTH.size + length
            if start > len(whole):
                raise Undecodable("cut short")
            objects: list = []
            hook, left = self._hook(whole, start, objects)
            value = json.loads(whole[_LENGTH.size:start].decode("utf-8", "surrogatepass"), object_hook=hook)
            if left() != 0:
                raise Undecodable("bytes left over")
            return value
        except Undecodable:
            raise
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError, zlib.error,
                UnicodeError, MemoryError, struct.error) as error:
            raise Undecodable(f"{type(error).__name__}: {error}") from None

    def _hook(self, whole: bytes, start: int, objects: list):
        """json's object hook for one payload (each JSON object, its contents already read, innermost first, in the
        order they end: the order `encode` numbered objects and laid out the bytes), and how many bytes are left."""
        classes, tags, tagged, new, append = self._classes, _TAGS, self._tagged, object.__new__, objects.append
        kinds_of = self._kinds
        end, cursor = len(whole), [start]

        def hook(data: dict) -> Any:
            if len(data) != 1:
                raise Undecodable("not a value of this codec")
            ((tag, inner),) = data.items()
            if tag == "b":  # the next `inner` bytes after the JSON
                at = cursor[0]
                if type(inner) is not int or not 0 <= inner <= end - at:
                    raise Undecodable("bytes past the payload's end")
                cursor[0] = at + inner
                return whole[at:at + inner]
            known = classes.get(tag)
            if known is None:
                if tag in tags:
                    return tagged(tag, inner, objects)
                raise Undecodable(f"{tag[:40]!r} is not a class this cache keeps")
            cls, fields = known
            if type(fields) is dict:  # an enum's members
                if type(inner) is not str or inner not in fields:
                    raise Undecodable(f"{tag}: no member {inner!r:.40}")
                return fields[inner]
            if type(inner) is not list or len(inner) != len(fields):
                raise Undecodable(f"{tag}: not its {len(fields)} fields")
            for value, kinds in zip(inner, kinds_of[cls]):
                if kinds is not None and type(value) not in kinds:
                    raise Undecodable(f"{tag}: a field of type {type(value).__name__:.40}")
            made = new(cls)
            made.__dict__.update(zip(fields, inner))
            append(made)
            return made

        return hook, lambda: end - cursor[0]

    def _tagged(self, tag: str, inner: Any, objects: list) -> Any:
        if tag == "r":
            if type(inner) is not int or not 0 <= inner < len(objects):
                raise Undecodable("a reference to no object")
            return objects[inner]
        if tag == "k":
            if type(inner) is not str or inner not in self._constants:
                raise Undecodable(f"{str(inner)[:40]!r} is not a constant this cache keeps")
            return self._constants[inner]
        if type(inner) is not list:
            raise Undecodable(f"{tag!r} without a list")
        if tag == "t":
            return tuple(inner)
        if tag == "s":
            return frozenset(inner)
        if not all(type(pair) is list and len(pair) == 2 for pair in inner):  # "d"
            raise Undecodable("a dict entry that is not a pair")
        return dict(inner)


_PLAIN = {"str": str, "int": int, "float": float, "bool": bool, "bytes": bytes, "None": type(None), "list": list,
          "tuple": tuple, "dict": dict, "frozenset": frozenset}


def _kinds(field: dataclasses.Field, names: dict[str, type], cls: type) -> frozenset | None:
    """The exact types a value of `field` may have, from its annotation (`str | None`, `list[Warning]`: its outer
    types), or None (any) where the annotation names something else or a property holds the field."""
    if isinstance(getattr(cls, field.name, None), property) or not isinstance(field.type, str):
        return None
    found = set()
    for part in field.type.split("|"):
        kind = names.get(part.strip().split("[", 1)[0])
        if kind is None:
            return None
        found.add(kind)
    return frozenset(found)


def _attributes(cls: type) -> tuple[str, ...]:
    """The attribute names an instance of dataclass `cls` holds in its `__dict__`, in field order (a property that
    replaced a field keeps its value under `_<name>`, as pinshift.planning.plan.FileChange does)."""
    names = []
    for field in dataclasses.fields(cls):
        held = field.name
        if isinstance(getattr(cls, field.name, None), property):
            held = f"_{field.name}"
        names.append(held)
    return tuple(names)
