"""Smaller versions of a failing case, for a reproducer a person can read.

`candidates(comp)` lists every case one step smaller (a qualifier, a branch, an adaptor, a
datum or a part of an expression dropped, an expression replaced by a part of it or by a
literal, a reduction turned into a `par!`), each still well typed and free of overflow.
The driver builds them all at once and keeps the smallest that fails the same way.
"""

import dataclasses

from grammar import (Bad, Bin, Cast, Comp, Data, Expr, Filter, Gen, Let, Lit, Nested, PName,
                     PRange, PSome, PTuple, PWild, SRange, SRow, Terminal, Tup, Unit, Var,
                     prepare, TRANSFORMS)
from generate import drop_unused, drop_unused_data, typed_env


def weight(comp):
    return comp.size() + sum(len(str(d.values)) for d in comp.data) // 8


def valid(comp):
    try:
        comp = drop_unused_data(drop_unused(comp))
        env = typed_env({'$' + d.name: d for d in comp.data})
        prepare(comp, env)
        return comp
    except (Bad, KeyError, IndexError, AttributeError, TypeError, ValueError):
        return None


def nodes(obj):
    """Every dataclass node reachable from `obj`, parents first."""
    out = []

    def walk(o):
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            out.append(o)
            for f in dataclasses.fields(o):
                walk(getattr(o, f.name))
        elif isinstance(o, (tuple, list)):
            for x in o:
                walk(x)

    walk(obj)
    return out


def replace_node(obj, target, new):
    """`obj` with the node `target` (by identity) replaced by `new`."""
    if obj is target:
        return new
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {}
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            nv = replace_node(v, target, new)
            if nv is not v:
                changes[f.name] = nv
        return dataclasses.replace(obj, **changes) if changes else obj
    if isinstance(obj, tuple):
        items = [replace_node(x, target, new) for x in obj]
        if any(a is not b for a, b in zip(items, obj)):
            return tuple(items)
    return obj


def drop_from_tuple(obj, container, index):
    """`obj` with element `index` of the tuple `container` (by identity) removed."""
    if obj is container:
        return obj[:index] + obj[index + 1:]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {}
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            nv = drop_from_tuple(v, container, index)
            if nv is not v:
                changes[f.name] = nv
        return dataclasses.replace(obj, **changes) if changes else obj
    if isinstance(obj, tuple):
        items = [drop_from_tuple(x, container, index) for x in obj]
        if any(a is not b for a, b in zip(items, obj)):
            return tuple(items)
    return obj


def tuples(obj):
    """Every tuple field of the nodes (qualifier lists, branches, adaptors, items)."""
    out = []
    for n in nodes(obj):
        for f in dataclasses.fields(n):
            v = getattr(n, f.name)
            if isinstance(v, tuple) and v and f.name != 'values':
                out.append(v)
                if f.name == 'branches':
                    out.extend(b for b in v if isinstance(b, tuple))
    return out


def candidates(comp):
    out = []

    def add(c):
        if c is not None and c is not comp:
            out.append(c)

    # Whole pieces: a qualifier, a branch, an adaptor, a tuple's item, a datum.
    seen = set()
    for t in tuples(comp):
        if id(t) in seen:
            continue
        seen.add(id(t))
        for i in range(len(t)):
            add(drop_from_tuple(comp, t, i))
    # The terminal: a `par!` of the same head.
    if comp.terminal.kind != 'par':
        add(dataclasses.replace(comp, terminal=Terminal('par')))
    # Data: fewer values.
    for d in comp.data:
        if len(d.values) > 0:
            for vals in (d.values[:len(d.values) // 2], d.values[1:], d.values[:-1]):
                add(replace_node(comp, d, dataclasses.replace(d, values=vals)))
        if d.kind in ('rows', 'jag'):
            for k, row in enumerate(d.values):
                if row:
                    rows = d.values[:k] + (row[:len(row) // 2],) + d.values[k + 1:]
                    add(replace_node(comp, d, dataclasses.replace(d, values=rows)))
    # Expressions: a part of them, or a literal.
    for n in nodes(comp):
        if isinstance(n, Expr) and not isinstance(n, (Lit, Var, Unit)):
            for child in n.children():
                add(replace_node(comp, n, child))
            if isinstance(n, Nested):
                add(replace_node(comp, n, n.comp.head))
        if isinstance(n, (Var, Cast, Bin)) or isinstance(n, Nested):
            for value in (0, 1):
                for ty in ('i32', 'usize', 'u8', 'i64', 'u32', 'u64', 'i8', 'i16', 'u16',
                           'isize'):
                    add(replace_node(comp, n, Lit(value, ty)))
        if isinstance(n, Lit) and n.value not in (0, 1):
            add(replace_node(comp, n, dataclasses.replace(n, value=0)))
            add(replace_node(comp, n, dataclasses.replace(n, value=1)))
        # Patterns: a name instead of what filters.
        if isinstance(n, (PRange, PSome, PTuple)):
            add(replace_node(comp, n, PWild()))
    result = []
    keys = set()
    w = weight(comp)
    for c in out:
        c = valid(c)
        if c is None or weight(c) >= w:
            continue
        key = repr(c)
        if key in keys:
            continue
        keys.add(key)
        result.append(c)
    result.sort(key=weight)
    return result
