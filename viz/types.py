"""Element types: scalars, CUDA vector types and C structs, with their sizes and layout."""

from __future__ import annotations

from dataclasses import dataclass

# name: (size in bytes, alignment in bytes, component scalar or None)
SCALARS = {"char": 1, "short": 2, "half": 2, "int": 4, "float": 4, "double": 8}
VECTORS = {
    "int2": ("int", 2), "float2": ("float", 2), "int3": ("int", 3), "float3": ("float", 3),
    "int4": ("int", 4), "float4": ("float", 4), "double2": ("double", 2),
}
COMPONENTS = "xyzw"


@dataclass(frozen=True)
class Field:
    """A named part of an element at a byte offset: a struct field or a vector component."""

    name: str
    type: "ElemType"
    offset: int


@dataclass(frozen=True)
class ElemType:
    """An element's C type. ``parts`` are the accesses a whole-element load is split into."""

    name: str
    size: int
    align: int
    fields: tuple[Field, ...] = ()
    is_struct: bool = False

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    @property
    def whole_parts(self) -> tuple[tuple[int, int], ...]:
        """(byte offset, size) of each instruction that a whole-element access becomes.

        A 3-component vector has no 12-byte instruction, so nvcc emits three 4-byte
        ones; a C struct (no __align__) is loaded field by field.
        """
        if self.is_struct or (self.fields and self.size != self.align):
            return tuple(p for f in self.fields for p in _shift(f.type.whole_parts, f.offset))
        return ((0, self.size),)

    def describe(self) -> str:
        if self.is_struct:
            inner = ", ".join(f"{f.type.name} {f.name} @{f.offset}" for f in self.fields)
            return f"struct {{{inner}}} ({self.size} B)"
        return f"{self.name} ({self.size} B)"


def _shift(parts, offset):
    return tuple((o + offset, s) for o, s in parts)


def scalar(name: str) -> ElemType:
    size = SCALARS[name]
    return ElemType(name, size, size)


def named_type(name: str) -> ElemType | None:
    """A scalar or vector type by its CUDA name, or None."""
    if name in SCALARS:
        return scalar(name)
    if name in VECTORS:
        comp_name, n = VECTORS[name]
        comp = scalar(comp_name)
        size = comp.size * n
        align = comp.size if n == 3 else size
        fields = tuple(Field(COMPONENTS[k], comp, k * comp.size) for k in range(n))
        return ElemType(name, size, align, fields)
    return None


def all_type_names() -> list[str]:
    return list(SCALARS) + list(VECTORS)


def struct(fields: list[tuple[str, ElemType]]) -> ElemType:
    """C layout: each field at a multiple of its alignment; size padded to the largest."""
    offset = 0
    align = 1
    placed = []
    for name, t in fields:
        offset = -(-offset // t.align) * t.align
        placed.append(Field(name, t, offset))
        offset += t.size
        align = max(align, t.align)
    size = -(-offset // align) * align
    name = "struct{" + ",".join(f"{n}:{t.name}" for n, t in fields) + "}"
    return ElemType(name, size, align, tuple(placed), is_struct=True)
