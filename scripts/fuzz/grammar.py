"""The documented language of `par!` as a small typed AST, rendered two ways.

Every node renders as the comprehension's text (`par`) and as the plain nested Rust loops that
compute the same value (`loop`): the expected result never goes through the macro. The types
carry integer intervals, so that a generated case never overflows (a debug build panics on
overflow, where the device wraps), never indexes out of bounds and never divides by zero: each
case has one right answer, the loops' one.

Types are tuples:
    ('int', name, lo, hi)   an integer type and the interval its values lie in
    ('bool',)
    ('float', name)         f32 or f64; values are small multiples of 1/4, so sums are exact
    ('tuple', [types])
    ('option', type)
    ('vec', type, maxlen)   a `Vec` (a nested `par!`, `slice.to_vec()`)
    ('slice', type, maxlen) a group's values after `group by` (`&[T]` in the comprehension)
    ('row', type, maxlen)   a row bound by a generator (`row <- &rows`): `&Vec<T>` or `&[T]`
    ('unit',)
"""

from dataclasses import dataclass, field, replace
from typing import Optional

INTS = {
    'i8': (-(2**7), 2**7 - 1),
    'i16': (-(2**15), 2**15 - 1),
    'i32': (-(2**31), 2**31 - 1),
    'i64': (-(2**63), 2**63 - 1),
    'isize': (-(2**63), 2**63 - 1),
    'i128': (-(2**127), 2**127 - 1),
    'u8': (0, 2**8 - 1),
    'u16': (0, 2**16 - 1),
    'u32': (0, 2**32 - 1),
    'u64': (0, 2**64 - 1),
    'usize': (0, 2**64 - 1),
    'u128': (0, 2**128 - 1),
}
SIGNED = {t for t, (lo, _) in INTS.items() if lo < 0}
BITS = {'i8': 8, 'i16': 16, 'i32': 32, 'i64': 64, 'isize': 64, 'i128': 128,
        'u8': 8, 'u16': 16, 'u32': 32, 'u64': 64, 'usize': 64, 'u128': 128}


class Bad(Exception):
    """A node that is not well typed, or whose values could leave their type."""


def int_t(name, lo, hi):
    tlo, thi = INTS[name]
    if lo < tlo or hi > thi:
        raise Bad(f'{name} interval [{lo}, {hi}] overflows')
    if lo > hi:
        raise Bad('empty interval')
    return ('int', name, lo, hi)


def full(name):
    return ('int', name) + INTS[name]


def same_shape(a, b):
    """Whether two types are the same Rust type (intervals aside)."""
    if a[0] != b[0]:
        return False
    if a[0] == 'int':
        return a[1] == b[1]
    if a[0] == 'float':
        return a[1] == b[1]
    if a[0] == 'tuple':
        return len(a[1]) == len(b[1]) and all(same_shape(x, y) for x, y in zip(a[1], b[1]))
    if a[0] in ('option',):
        return same_shape(a[1], b[1])
    if a[0] in ('vec', 'slice', 'row'):
        return same_shape(a[1], b[1])
    return True


def rust_type(t):
    kind = t[0]
    if kind == 'int':
        return t[1]
    if kind == 'bool':
        return 'bool'
    if kind == 'float':
        return t[1]
    if kind == 'unit':
        return '()'
    if kind == 'tuple':
        return '(' + ''.join(rust_type(x) + ', ' for x in t[1]).rstrip(' ') + ')'
    if kind == 'option':
        return f'Option<{rust_type(t[1])}>'
    if kind == 'vec':
        return f'Vec<{rust_type(t[1])}>'
    raise Bad(f'no Rust type for {kind}')


def elem_max_abs(t):
    return max(abs(t[2]), abs(t[3]))


# ----------------------------------------------------------------------------------------------
# Captured data


@dataclass(frozen=True)
class Data:
    """A value the case defines before the comprehension and the comprehension captures.

    kind: 'vec' Vec<T>, 'pairs' Vec<(T, U)>, 'opts' Vec<Option<T>>, 'rows' Vec<Vec<T>>,
    'jag' Jagged<T> (built from the same rows), 'scalar' a number.
    `values` holds Python values: ints, tuples, None, lists.
    """
    name: str
    kind: str
    elem: tuple  # the element's type names: ('i16',) or ('i16', 'u8') for pairs
    values: tuple

    def flat(self):
        if self.kind in ('vec',):
            return list(self.values)
        if self.kind == 'opts':
            return [v for v in self.values if v is not None]
        if self.kind in ('rows', 'jag'):
            return [v for row in self.values for v in row]
        if self.kind == 'scalar':
            return [self.values[0]]
        return []

    def elem_type(self):
        """The type of one element as a generator over the whole value yields it."""
        if self.kind == 'vec':
            return interval_of(self.elem[0], self.values)
        if self.kind == 'pairs':
            return ('tuple', [interval_of(self.elem[0], [p[0] for p in self.values]),
                              interval_of(self.elem[1], [p[1] for p in self.values])])
        if self.kind == 'opts':
            return ('option', interval_of(self.elem[0], [v for v in self.values if v is not None]))
        if self.kind in ('rows', 'jag'):
            return ('row', self.row_elem_type(), max([len(r) for r in self.values], default=0))
        raise Bad('a scalar is no collection')

    def row_elem_type(self):
        flat = [v for row in self.values for v in row]
        if len(self.elem) == 2:
            return ('tuple', [interval_of(self.elem[0], [p[0] for p in flat]),
                              interval_of(self.elem[1], [p[1] for p in flat])])
        return interval_of(self.elem[0], flat)

    def scalar_type(self):
        return int_t(self.elem[0], self.values[0], self.values[0])

    def rust_type(self):
        t = self.elem[0] if len(self.elem) == 1 else f'({self.elem[0]}, {self.elem[1]})'
        return {'vec': f'Vec<{t}>', 'pairs': f'Vec<{t}>', 'opts': f'Vec<Option<{t}>>',
                'rows': f'Vec<Vec<{t}>>', 'jag': f'Jagged<{t}>', 'scalar': t}[self.kind]

    def literal(self, value):
        if value is None:
            return 'None'
        if isinstance(value, tuple):
            return '(' + ', '.join(lit_text(v, t) for v, t in zip(value, self.elem)) + ')'
        return lit_text(value, self.elem[0])

    def rows_text(self):
        return 'vec![' + ', '.join(
            'vec![' + ', '.join(self.literal(v) for v in row) + ']' for row in self.values) + ']'

    def declare(self, loop):
        """The `let` that defines it: in the loops, a Jagged is the `Vec<Vec<T>>` it is built
        from."""
        n = self.name
        if self.kind == 'scalar':
            return f'let {n}: {self.elem[0]} = {lit_text(self.values[0], self.elem[0])};'
        if self.kind == 'opts':
            items = ', '.join('None' if v is None else f'Some({bare(self.literal(v))})'
                              for v in self.values)
            return f'let {n}: {self.rust_type()} = vec![{items}];'
        if self.kind in ('vec', 'pairs'):
            items = ', '.join(self.literal(v) for v in self.values)
            return f'let {n}: {self.rust_type()} = vec![{items}];'
        if self.kind == 'rows':
            return f'let {n}: {self.rust_type()} = {self.rows_text()};'
        if self.kind == 'jag':
            inner = self.rust_type()[len('Jagged<'):-1]
            if loop:
                # The loops read the rows it is built from, under its name.
                return f'let {n}: Vec<Vec<{inner}>> = {self.rows_text()};'
            return f'let {n}: {self.rust_type()} = Jagged::from({self.rows_text()});'
        raise Bad(self.kind)

    def size(self):
        return len(self.values)


def interval_of(name, values):
    values = list(values)
    if not values:
        return ('int', name, 0, 0)
    return int_t(name, min(values), max(values))


def lit_text(v, ty, suffix=True):
    text = f'{v}{ty if suffix else ""}'
    return f'({text})' if v < 0 else text


# ----------------------------------------------------------------------------------------------
# Expressions


class Expr:
    def typ(self, env):
        raise NotImplementedError

    def render(self, mode):
        raise NotImplementedError

    def typed(self):
        """Whether the expression's type is decided by itself, not by its context (an
        unsuffixed literal is not)."""
        return True

    def uses(self):
        return set()

    def children(self):
        return []

    def rebuild(self, children):
        return self

    def size(self):
        return 1 + sum(c.size() for c in self.children())


def bare(text):
    """`text` without parentheses around the whole of it: where plain Rust calls them
    unnecessary (an `if`'s condition, a method's argument, a closure's body, an index)."""
    while text.startswith('(') and text.endswith(')'):
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == '('
            depth -= ch == ')'
            if depth == 0 and i < len(text) - 1:
                return text
        inner = text[1:-1]
        if inner.endswith(',') or inner.startswith('-') and inner[1:2].isdigit() and False:
            return text
        if ',' in inner and _top_level_comma(inner):
            return text  # a tuple
        text = inner
    return text


def _top_level_comma(text):
    depth = 0
    for ch in text:
        depth += ch in '([{'
        depth -= ch in ')]}'
        if ch == ',' and depth == 0:
            return True
    return False


def operand(e, sibling, mode):
    """An operand beside `sibling`: an unsuffixed literal only where the sibling types it."""
    if isinstance(e, Lit) and not e.suffix and not sibling.typed():
        return replace(e, suffix=True).render(mode)
    return e.render(mode)


@dataclass(frozen=True)
class Lit(Expr):
    value: int
    ty: str
    suffix: bool = True

    def typ(self, env):
        return int_t(self.ty, self.value, self.value)

    def render(self, mode):
        return lit_text(self.value, self.ty, self.suffix)

    def typed(self):
        return self.suffix


@dataclass(frozen=True)
class FLit(Expr):
    value: float
    ty: str

    def typ(self, env):
        return ('float', self.ty)

    def render(self, mode):
        text = f'{self.value!r}{self.ty}'
        return f'({text})' if self.value < 0 else text


@dataclass(frozen=True)
class BLit(Expr):
    value: bool

    def typ(self, env):
        return ('bool',)

    def render(self, mode):
        return 'true' if self.value else 'false'


@dataclass(frozen=True)
class Var(Expr):
    name: str

    def typ(self, env):
        if self.name not in env:
            raise Bad(f'{self.name} unbound')
        t = env[self.name]
        if t[0] in ('slice', 'row'):
            raise Bad(f'{self.name} is a {t[0]}')
        return t

    def render(self, mode):
        return self.name

    def uses(self):
        return {self.name}


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


ARITH = ('+', '-', '*')


@dataclass(frozen=True)
class Bin(Expr):
    op: str
    a: Expr
    b: Expr

    def children(self):
        return [self.a, self.b]

    def rebuild(self, c):
        return Bin(self.op, c[0], c[1])

    def uses(self):
        return self.a.uses() | self.b.uses()

    def typed(self):
        return self.a.typed() or self.b.typed()

    def typ(self, env):
        ta, tb = self.a.typ(env), self.b.typ(env)
        if not same_shape(ta, tb):
            raise Bad('operands differ')
        if ta[0] == 'float':
            if self.op not in ARITH + ('min', 'max'):
                raise Bad('float op')
            return ta
        if ta[0] != 'int':
            raise Bad('not an int')
        name, (al, ah), (bl, bh) = ta[1], ta[2:], tb[2:]
        op = self.op
        if op in ARITH:
            f = {'+': lambda x, y: x + y, '-': lambda x, y: x - y, '*': lambda x, y: x * y}[op]
            corners = [f(x, y) for x in (al, ah) for y in (bl, bh)]
            return int_t(name, min(corners), max(corners))
        if op in ('wrapping_add', 'wrapping_sub', 'wrapping_mul'):
            return full(name)
        if op in ('/', '%'):
            if bl <= 0 <= bh:
                raise Bad('divisor may be zero')
            tlo = INTS[name][0]
            if name in SIGNED and al == tlo and bl <= -1 <= bh:
                raise Bad('MIN / -1')
            if op == '/':
                corners = [_trunc_div(x, y) for x in (al, ah) for y in (bl, bh)]
                return int_t(name, min(corners), max(corners))
            m = max(abs(bl), abs(bh)) - 1
            if al >= 0:
                return int_t(name, 0, min(ah, m))
            if ah <= 0:
                return int_t(name, max(al, -m), 0)
            return int_t(name, max(al, -m), min(ah, m))
        if op in ('&', '|', '^'):
            if al < 0 or bl < 0:
                raise Bad('bit op on a negative')
            if op == '&':
                return int_t(name, 0, min(ah, bh))
            return int_t(name, 0, (1 << max(ah, bh).bit_length()) - 1)
        if op in ('<<', '>>'):
            if not (isinstance(self.b, Lit) and 0 <= self.b.value < BITS[name]):
                raise Bad('shift by a literal only')
            k = self.b.value
            if op == '>>':
                return int_t(name, al >> k, ah >> k)
            lo, hi = al << k, ah << k
            tlo, thi = INTS[name]
            # Bits shifted out are lost (no panic): the value may be anything of the type.
            return ('int', name, lo, hi) if tlo <= lo and hi <= thi else full(name)
        if op in ('min', 'max'):
            f = min if op == 'min' else max
            return int_t(name, f(al, bl), f(ah, bh))
        raise Bad(op)

    def render(self, mode):
        a = operand(self.a, self.b, mode)
        b = operand(self.b, self.a, mode)
        if self.op in ('min', 'max', 'wrapping_add', 'wrapping_sub', 'wrapping_mul'):
            if isinstance(self.a, (Lit, FLit)) and not self.a.typed():
                a = replace(self.a, suffix=True).render(mode)
            return f'{a}.{self.op}({bare(b)})'
        if self.op in ('<<', '>>'):
            return f'({a} {self.op} {self.b.value})'
        return f'({a} {self.op} {b})'


@dataclass(frozen=True)
class Neg(Expr):
    a: Expr

    def children(self):
        return [self.a]

    def rebuild(self, c):
        return Neg(c[0])

    def uses(self):
        return self.a.uses()

    def typed(self):
        return self.a.typed()

    def typ(self, env):
        t = self.a.typ(env)
        if t[0] == 'float':
            return t
        if t[0] != 'int' or t[1] not in SIGNED:
            raise Bad('negation of an unsigned')
        return int_t(t[1], -t[3], -t[2])

    def render(self, mode):
        return f'(-{self.a.render(mode)})'


@dataclass(frozen=True)
class Abs(Expr):
    a: Expr

    def children(self):
        return [self.a]

    def rebuild(self, c):
        return Abs(c[0])

    def uses(self):
        return self.a.uses()

    def typ(self, env):
        t = self.a.typ(env)
        if t[0] != 'int' or t[1] not in SIGNED:
            raise Bad('abs of an unsigned')
        lo, hi = t[2], t[3]
        if lo <= 0 <= hi:
            return int_t(t[1], 0, max(-lo, hi))
        return int_t(t[1], min(abs(lo), abs(hi)), max(abs(lo), abs(hi)))

    def render(self, mode):
        a = self.a.render(mode) if self.a.typed() else replace(self.a, suffix=True).render(mode)
        return f'{a}.abs()'


@dataclass(frozen=True)
class Cast(Expr):
    a: Expr
    ty: str

    def children(self):
        return [self.a]

    def rebuild(self, c):
        return Cast(c[0], self.ty)

    def uses(self):
        return self.a.uses()

    def typ(self, env):
        t = self.a.typ(env)
        if self.ty in ('f32', 'f64'):
            if t[0] == 'int' and elem_max_abs(t) < 2**20:
                return ('float', self.ty)
            if t[0] == 'float':
                return ('float', self.ty)
            raise Bad('cast to float')
        if t[0] == 'bool':
            return int_t(self.ty, 0, 1)
        if t[0] != 'int':
            raise Bad('cast of a non-integer')
        tlo, thi = INTS[self.ty]
        if tlo <= t[2] and t[3] <= thi:
            return int_t(self.ty, t[2], t[3])
        # `as` wraps: any value of the target type.
        return full(self.ty)

    def render(self, mode):
        a = self.a.render(mode) if self.a.typed() else replace(self.a, suffix=True).render(mode)
        return f'({a} as {self.ty})'


@dataclass(frozen=True)
class If(Expr):
    c: Expr
    a: Expr
    b: Expr

    def children(self):
        return [self.c, self.a, self.b]

    def rebuild(self, c):
        return If(*c)

    def uses(self):
        return self.c.uses() | self.a.uses() | self.b.uses()

    def typed(self):
        return self.a.typed() or self.b.typed()

    def typ(self, env):
        if self.c.typ(env)[0] != 'bool':
            raise Bad('condition')
        ta, tb = self.a.typ(env), self.b.typ(env)
        if not same_shape(ta, tb):
            raise Bad('branches differ')
        if ta[0] == 'int':
            return int_t(ta[1], min(ta[2], tb[2]), max(ta[3], tb[3]))
        if ta[0] in ('float', 'bool'):
            return ta
        raise Bad('if of a compound')

    def render(self, mode):
        return (f'(if {bare(self.c.render(mode))} {{ {bare(operand(self.a, self.b, mode))} }} '
                f'else {{ {bare(operand(self.b, self.a, mode))} }})')


CMP = ('<', '<=', '>', '>=', '==', '!=')


@dataclass(frozen=True)
class Cmp(Expr):
    op: str
    a: Expr
    b: Expr

    def children(self):
        return [self.a, self.b]

    def rebuild(self, c):
        return Cmp(self.op, c[0], c[1])

    def uses(self):
        return self.a.uses() | self.b.uses()

    def typ(self, env):
        ta, tb = self.a.typ(env), self.b.typ(env)
        if not same_shape(ta, tb) or ta[0] not in ('int', 'float', 'bool'):
            raise Bad('comparison')
        if ta[0] == 'int' and not (self.a.typed() or self.b.typed()):
            raise Bad('two unsuffixed literals')
        if ta[0] == 'int' and ta[1] not in SIGNED:
            # rustc warns of a comparison that type limits decide (`x >= 0` of an unsigned).
            zero = lambda e: isinstance(e, Lit) and e.value == 0
            if (self.op in ('<', '>=') and zero(self.b)) or (self.op in ('>', '<=') and zero(self.a)):
                raise Bad('a comparison decided by the type')
        return ('bool',)

    def render(self, mode):
        return f'({operand(self.a, self.b, mode)} {self.op} {operand(self.b, self.a, mode)})'


@dataclass(frozen=True)
class Logic(Expr):
    op: str  # '&&', '||', '!'
    a: Expr
    b: Optional[Expr] = None

    def children(self):
        return [self.a] if self.b is None else [self.a, self.b]

    def rebuild(self, c):
        return Logic(self.op, c[0], c[1] if len(c) > 1 else None)

    def uses(self):
        return self.a.uses() | (self.b.uses() if self.b else set())

    def typ(self, env):
        for c in self.children():
            if c.typ(env)[0] != 'bool':
                raise Bad('logic of a non-bool')
        return ('bool',)

    def render(self, mode):
        if self.op == '!':
            return f'(!{self.a.render(mode)})'
        return f'({self.a.render(mode)} {self.op} {self.b.render(mode)})'


@dataclass(frozen=True)
class Len(Expr):
    """`v.len()` of a group's values, a bound row or a captured collection."""
    name: str

    def uses(self):
        return {self.name}

    def typ(self, env):
        t = env.get(self.name)
        if t is None and '$' + self.name in env:
            d = env['$' + self.name]
            if d.kind == 'scalar':
                raise Bad('len of a number')
            return int_t('usize', d.size(), d.size())
        if t is None or t[0] not in ('slice', 'row'):
            raise Bad('len of a non-collection')
        return int_t('usize', 0, t[2])

    def render(self, mode):
        return f'{self.name}.len()'



@dataclass(frozen=True)
class ToVec(Expr):
    """`v.to_vec()` of a group's values."""
    name: str

    def uses(self):
        return {self.name}

    def typ(self, env):
        t = env.get(self.name)
        if t is None or t[0] != 'slice':
            raise Bad('to_vec of a non-slice')
        return ('vec', t[1], t[2])

    def render(self, mode):
        return f'{self.name}.to_vec()'


@dataclass(frozen=True)
class Field(Expr):
    """`t.0` of a tuple variable."""
    a: Expr
    index: int

    def children(self):
        return [self.a]

    def rebuild(self, c):
        return Field(c[0], self.index)

    def uses(self):
        return self.a.uses()

    def typ(self, env):
        t = self.a.typ(env)
        if t[0] != 'tuple' or self.index >= len(t[1]):
            raise Bad('field')
        return t[1][self.index]

    def render(self, mode):
        return f'{self.a.render(mode)}.{self.index}'


@dataclass(frozen=True)
class Tup(Expr):
    items: tuple

    def children(self):
        return list(self.items)

    def rebuild(self, c):
        return Tup(tuple(c))

    def uses(self):
        return set().union(*[i.uses() for i in self.items]) if self.items else set()

    def typ(self, env):
        return ('tuple', [i.typ(env) for i in self.items])

    def render(self, mode):
        parts = [i.render(mode) if i.typed() else replace(i, suffix=True).render(mode)
                 for i in self.items]
        if len(parts) == 1:
            return f'({parts[0]},)'
        return '(' + ', '.join(parts) + ')'


@dataclass(frozen=True)
class Unit(Expr):
    def typ(self, env):
        return ('unit',)

    def render(self, mode):
        return '()'


@dataclass(frozen=True)
class Nested(Expr):
    """A comprehension in the head (or a filter, a `let`) of another."""
    comp: 'Comp'

    def uses(self):
        return self.comp.free_uses()

    def children(self):
        return []

    def size(self):
        return 1 + self.comp.size()

    def typ(self, env):
        t, _count, _work = self.comp.check(env)
        return t

    def render(self, mode):
        return self.comp.render_par() if mode == 'par' else self.comp.render_loop()


# ----------------------------------------------------------------------------------------------
# Patterns


@dataclass(frozen=True)
class PName:
    name: str

    def names(self):
        return [self.name]

    def refutable(self):
        return False

    def bind(self, t):
        return {self.name: t}

    def render(self):
        return self.name


@dataclass(frozen=True)
class PWild:
    def names(self):
        return []

    def refutable(self):
        return False

    def bind(self, t):
        return {}

    def render(self):
        return '_'


@dataclass(frozen=True)
class PTuple:
    items: tuple

    def names(self):
        return [n for p in self.items for n in p.names()]

    def refutable(self):
        return any(p.refutable() for p in self.items)

    def bind(self, t):
        if t[0] != 'tuple' or len(t[1]) != len(self.items):
            raise Bad('tuple pattern')
        out = {}
        for p, s in zip(self.items, t[1]):
            out.update(p.bind(s))
        return out

    def render(self):
        if len(self.items) == 1:
            return f'({self.items[0].render()},)'
        return '(' + ', '.join(p.render() for p in self.items) + ')'


@dataclass(frozen=True)
class PSome:
    inner: object

    def names(self):
        return self.inner.names()

    def refutable(self):
        return True

    def bind(self, t):
        if t[0] != 'option':
            raise Bad('Some of a non-option')
        return self.inner.bind(t[1])

    def render(self):
        return f'Some({self.inner.render()})'


@dataclass(frozen=True)
class PRange:
    """`lo..=hi`, `n @ lo..=hi`, a literal `lo` (hi None), or `n @ (a | b)` (alts)."""
    lo: int
    hi: Optional[int]
    name: Optional[str] = None
    alts: tuple = ()

    def names(self):
        return [self.name] if self.name else []

    def refutable(self):
        return True

    def bind(self, t):
        if t[0] != 'int':
            raise Bad('range pattern of a non-int')
        if self.alts:
            lo, hi = min(self.alts), max(self.alts)
        else:
            lo, hi = self.lo, self.hi if self.hi is not None else self.lo
        tlo, thi = INTS[t[1]]
        if lo < tlo or hi > thi or lo > hi:
            raise Bad('pattern out of its type')
        if not self.name:
            return {}
        lo, hi = max(lo, t[2]), min(hi, t[3])
        if lo > hi:
            # Never matches: the variable is never read; any interval of its type will do.
            lo = hi = max(t[2], tlo)
        return {self.name: ('int', t[1], lo, hi)}

    def render(self):
        if self.alts:
            inner = '(' + ' | '.join(str(a) for a in self.alts) + ')'
        elif self.hi is None:
            inner = str(self.lo)
        else:
            inner = f'{self.lo}..={self.hi}'
        return f'{self.name} @ {inner}' if self.name else inner


# ----------------------------------------------------------------------------------------------
# Generators' sources


@dataclass(frozen=True)
class Adaptor:
    kind: str  # 'rev', 'step', 'map'
    step: int = 0
    param: str = ''
    body: Optional[Expr] = None
    annotate: bool = False

    def render(self, mode, param_type):
        if self.kind == 'rev':
            # The loops reverse what they collected: std's `rev` of a `step_by` needs an exact
            # size, which `RangeInclusive<usize>` lacks.
            return '.rev()' if mode == 'par' else '.collect::<Vec<_>>().into_iter().rev()'
        if self.kind == 'step':
            return f'.step_by({self.step})'
        ann = f': {param_type}' if self.annotate else ''
        return f'.map(|{self.param}{ann}| {bare(self.body.render(mode))})'


def apply_adaptors(adaptors, elem, size, env, data_env):
    """The element type and the size bound after the adaptors."""
    for a in adaptors:
        if a.kind == 'step':
            size = -(-size // a.step)
        elif a.kind == 'map':
            if elem[0] not in ('int', 'tuple'):
                raise Bad('map of this element')
            inner = dict(env)
            inner[a.param] = elem
            if a.param in env:
                raise Bad('map parameter shadows')
            elem = a.body.typ(inner)
            if elem[0] != 'int':
                raise Bad('map to a non-integer')
    return elem, size


@dataclass(frozen=True)
class SRange:
    start: Expr
    end: Expr
    inclusive: bool
    adaptors: tuple = ()

    def uses(self):
        u = self.start.uses() | self.end.uses()
        for a in self.adaptors:
            if a.body is not None:
                u |= a.body.uses() - {a.param}
        return u

    def elem(self, env):
        ts, te = self.start.typ(env), self.end.typ(env)
        if ts[0] != 'int' or not same_shape(ts, te):
            raise Bad('range bounds')
        if not (self.start.typed() or self.end.typed()):
            raise Bad('range of two unsuffixed literals')
        hi = te[3] if self.inclusive else te[3] - 1
        size = max(0, hi - ts[2] + 1)
        if hi < ts[2]:
            elem = ('int', ts[1], ts[2], ts[2])  # always empty
        else:
            elem = ('int', ts[1], ts[2], hi)
        return apply_adaptors(self.adaptors, elem, size, env, None)

    def base_type(self, env):
        return self.start.typ(env)[1]

    def render(self, mode, env):
        s = operand(self.start, self.end, mode)
        e = operand(self.end, self.start, mode)
        r = f'({s}..{"=" if self.inclusive else ""}{e})'
        base = self.base_type(env)
        return r + ''.join(a.render(mode, base) for a in self.adaptors)

    def loop_iter(self, env):
        return self.render('loop', env)


@dataclass(frozen=True)
class SData:
    """A captured collection: `&xs`, `xs.clone()`, `&xs[1..]`, `&rows`, `&jag`."""
    name: str
    form: str = 'ref'  # 'ref', 'clone', 'tail'

    def uses(self):
        return {self.name}

    def elem(self, env):
        d = env.get('$' + self.name)
        if d is None:
            raise Bad('no such data')
        t = d.elem_type()
        size = d.size()
        if self.form == 'tail':
            if d.kind not in ('vec', 'pairs') or size == 0:
                raise Bad('tail of this')
            size -= 1
        if self.form == 'clone' and d.kind not in ('vec', 'pairs', 'opts'):
            raise Bad('clone of this')
        return t, size

    def render(self, mode, env):
        n = self.name
        return {'ref': f'&{n}', 'clone': f'{n}.clone()', 'tail': f'&{n}[1..]'}[self.form]

    def loop_iter(self, env):
        d = env['$' + self.name]
        n = self.name
        if d.kind in ('jag', 'rows'):
            return f'{n}.iter()'
        return {'ref': f'{n}.iter().copied()', 'clone': f'{n}.clone().into_iter()',
                'tail': f'{n}[1..].iter().copied()'}[self.form]


@dataclass(frozen=True)
class SArray:
    values: tuple
    ty: str

    def elem(self, env):
        return interval_of(self.ty, self.values), len(self.values)

    def uses(self):
        return set()

    def render(self, mode, env):
        items = [lit_text(v, self.ty, i == 0) for i, v in enumerate(self.values)]
        return '[' + ', '.join(items) + ']'

    def loop_iter(self, env):
        return self.render('loop', env) + '.into_iter()'


@dataclass(frozen=True)
class SRow:
    """A row read in place: `rows[i]`, `&rows[i]`, `jag.row(i)`, or a bound row / a group's
    values `v` (data None), with adaptors."""
    data: Optional[str]
    index: Optional[Expr]
    form: str  # 'index', 'refindex', 'row', 'var'
    var: Optional[str] = None
    adaptors: tuple = ()

    def uses(self):
        u = set()
        if self.data:
            u.add(self.data)
        if self.index is not None:
            u |= self.index.uses()
        if self.var:
            u.add(self.var)
        for a in self.adaptors:
            if a.body is not None:
                u |= a.body.uses() - {a.param}
        return u

    def elem(self, env):
        if self.form == 'var':
            t = env.get(self.var)
            if t is None or t[0] not in ('row', 'slice'):
                raise Bad('row variable')
            elem, size = t[1], t[2]
        else:
            d = env.get('$' + self.data)
            if d is None or d.kind not in ('rows', 'jag'):
                raise Bad('rows')
            if self.form == 'row' and d.kind != 'jag':
                raise Bad('row() of a Vec')
            if self.form in ('index', 'refindex') and d.kind != 'rows':
                raise Bad('index of a Jagged')
            ti = self.index.typ(env)
            if ti[0] != 'int' or ti[1] != 'usize' or ti[2] < 0 or ti[3] >= len(d.values):
                raise Bad('row index out of bounds')
            elem = d.row_elem_type()
            size = max([len(r) for r in d.values[ti[2]:ti[3] + 1]], default=0)
        return apply_adaptors(self.adaptors, elem, size, env, None)

    def _base(self, mode):
        if self.form == 'var':
            return self.var
        i = bare(self.index.render(mode))
        return {'index': f'{self.data}[{i}]', 'refindex': f'&{self.data}[{i}]',
                'row': f'{self.data}.row({i})'}[self.form]

    def render(self, mode, env):
        base = self._base(mode)
        if self.adaptors and self.form == 'refindex':
            base = f'({base})'
        elem = self._elem_type(env)
        return base + ''.join(a.render(mode, rust_type(elem)) for a in self.adaptors)

    def _elem_type(self, env):
        if self.form == 'var':
            return env[self.var][1]
        return env['$' + self.data].row_elem_type()

    def loop_iter(self, env):
        if self.form == 'var':
            base = f'{self.var}.iter().copied()'
        else:
            i = bare(self.index.render('loop'))
            base = f'{self.data}[{i}].iter().copied()'
        elem = self._elem_type(env)
        return base + ''.join(a.render('loop', rust_type(elem)) for a in self.adaptors)


# ----------------------------------------------------------------------------------------------
# Qualifiers


@dataclass(frozen=True)
class Gen:
    pat: object
    src: object

    def text(self, env):
        return f'{self.pat.render()} <- {self.src.render("par", env)}'


@dataclass(frozen=True)
class Filter:
    cond: Expr


@dataclass(frozen=True)
class Let:
    pat: object  # PName, PWild or PTuple of them
    expr: Expr


@dataclass(frozen=True)
class OrderBy:
    key: Expr
    desc: bool


@dataclass(frozen=True)
class Take:
    n: int
    var: Optional[str] = None  # a captured usize instead of the literal


@dataclass(frozen=True)
class Skip:
    n: int
    var: Optional[str] = None


@dataclass(frozen=True)
class GroupBy:
    keys: tuple  # names


TRANSFORMS = (OrderBy, Take, Skip, GroupBy)


def qual_uses(q):
    if isinstance(q, Gen):
        return q.src.uses()
    if isinstance(q, Filter):
        return q.cond.uses()
    if isinstance(q, Let):
        return q.expr.uses()
    if isinstance(q, OrderBy):
        return q.key.uses()
    if isinstance(q, (Take, Skip)):
        return {q.var} if q.var else set()
    if isinstance(q, GroupBy):
        return set(q.keys)
    return set()


def qual_binds(q):
    if isinstance(q, (Gen, Let)):
        return q.pat.names()
    return []


# ----------------------------------------------------------------------------------------------
# Comprehensions


REDUCTIONS = ('sum', 'product', 'min', 'max', 'count', 'any', 'all')
MACRO = {'par': 'par', 'sum': 'par_sum', 'product': 'par_product', 'min': 'par_min',
         'max': 'par_max', 'count': 'par_count', 'any': 'par_any', 'all': 'par_all',
         'reduce': 'par_reduce', 'min_by_key': 'par_min_by_key',
         'max_by_key': 'par_max_by_key'}

REDUCE_OPS = {
    # name: (closure text with {t}, identity text with {t}, applies to signed?, unsigned?)
    'xor': ('|a: {t}, b: {t}| a ^ b', '0{t}'),
    'or': ('|a: {t}, b| a | b', '0{t}'),
    'and': ('|a: {t}, b: {t}| a & b', '{t}::MAX'),
    'max': ('|a: {t}, b: {t}| a.max(b)', '{t}::MIN'),
    'min': ('|a: {t}, b: {t}| a.min(b)', '{t}::MAX'),
    'wrapping_add': ('|a: {t}, b: {t}| a.wrapping_add(b)', '0{t}'),
    'add': ('|a: {t}, b: {t}| a + b', '0{t}'),
}


@dataclass(frozen=True)
class Terminal:
    kind: str  # 'par' or a reduction, 'reduce', 'min_by_key', 'max_by_key'
    op: str = ''  # for 'reduce': a key of REDUCE_OPS
    key: Optional[Expr] = None  # for by-key: an expression of the parameter `p`
    key_param: str = 'p'


@dataclass(frozen=True)
class Comp:
    terminal: Terminal
    head: Expr
    branches: tuple  # of tuples of qualifiers
    data: tuple = ()  # the Data values it captures (top level only)

    # -- analysis ----------------------------------------------------------------------------

    def size(self):
        n = self.head.size() + 1
        for b in self.branches:
            for q in b:
                n += 1
                for e in q_exprs(q):
                    n += e.size()
        return n

    def free_uses(self):
        bound = set()
        uses = set()
        for b in self.branches:
            for q in b:
                uses |= qual_uses(q) - bound
                bound |= set(qual_binds(q))
        return uses | (self.head.uses() - bound)

    def check(self, env):
        """(the result's type, the most elements, the work: generator steps in all), or Bad."""
        env = dict(env)
        if len(self.branches) > 1:
            count, work = None, 0
            outer = dict(env)
            for b in self.branches:
                if any(isinstance(q, TRANSFORMS) for q in b):
                    raise Bad('a transform in a zipped branch')
                # A branch sees none of the others' variables.
                benv = dict(outer)
                c, w = check_qualifiers(b, benv, top=True)
                for name in benv:
                    if name not in outer:
                        env[name] = benv[name]
                count = c if count is None else min(count, c)
                work += w
        else:
            count, work = check_qualifiers(self.branches[0], env, top=True)
        names = [n for b in self.branches for q in b for n in qual_binds(q)]
        if len(names) != len(set(names)):
            raise Bad('a name bound twice')
        head_t = self.head.typ(env)
        head_work = nested_work(self.head, env)
        work += count * head_work
        return self.result_type(head_t, count), count, work

    def result_type(self, h, count):
        k = self.terminal.kind
        if k == 'par':
            return ('vec', h, count)
        if k in ('sum', 'product'):
            if h[0] == 'float':
                return h
            if h[0] != 'int':
                raise Bad('sum of a non-number')
            m = elem_max_abs(h)
            if k == 'sum':
                return int_t(h[1], min(0, h[2] * count), max(0, h[3] * count))
            if m <= 1:
                return int_t(h[1], -1 if h[2] < 0 else 0, 1)
            b = m ** min(count, 200)
            return int_t(h[1], -b if h[2] < 0 else (0 if h[2] >= 0 else -b), b)
        if k in ('min', 'max'):
            if h[0] != 'int':
                raise Bad('min of a non-int')
            return ('option', h)
        if k == 'count':
            return int_t('usize', 0, count)
        if k in ('any', 'all'):
            if h[0] != 'bool':
                raise Bad('any of a non-bool')
            return ('bool',)
        if k == 'reduce':
            if h[0] != 'int':
                raise Bad('reduce of a non-int')
            if self.terminal.op == 'add':
                m = elem_max_abs(h) * count
                return int_t(h[1], -m if h[1] in SIGNED else 0, m)
            if self.terminal.op in ('and', 'or', 'xor') and h[2] < 0:
                return full(h[1])
            if self.terminal.op in ('max', 'min', 'and', 'or', 'xor', 'wrapping_add'):
                return full(h[1])
            raise Bad('reduce op')
        if k in ('min_by_key', 'max_by_key'):
            if h[0] != 'tuple':
                raise Bad('by key of a non-tuple')
            kt = self.terminal.key.typ({self.terminal.key_param: h})
            if kt[0] not in ('int', 'tuple', 'bool'):
                raise Bad('key')
            return ('option', h)
        raise Bad(k)

    # -- rendering ---------------------------------------------------------------------------

    def render_par(self, env=None):
        env = env or self._env
        quals = ' | '.join(', '.join(render_qual(q, env) for q in b) for b in self.branches)
        head = self.head.render('par')
        if not self.head.typed():
            head = replace(self.head, suffix=True).render('par')
        t = self.terminal
        name = MACRO[t.kind]
        if t.kind == 'reduce':
            closure, identity = REDUCE_OPS[t.op]
            ty = self._head_type[1]
            return f'{name}!({closure.format(t=ty)}, {identity.format(t=ty)}; {head} | {quals})'
        if t.kind in ('min_by_key', 'max_by_key'):
            ty = rust_type(self._head_type)
            key = f'|{t.key_param}: &{ty}| {bare(t.key.render("par"))}'
            return f'{name}!({key}; {head} | {quals})'
        return f'{name}![{head} | {quals}]'

    def render_loop(self):
        env = self._env
        head = self.head.render('loop')
        if not self.head.typed():
            head = replace(self.head, suffix=True).render('loop')
        out = fresh('out')
        if len(self.branches) > 1:
            body = zipped_loops(self.branches, env, f'{out}.push({head});')
        else:
            body = branch_loops(self.branches[0], env, f'{out}.push({head});')
        finish = finish_code(self.terminal, out, self._head_type)
        return f'{{ let mut {out} = Vec::new(); {body} {finish} }}'


def q_exprs(q):
    if isinstance(q, Gen):
        src = q.src
        out = []
        if isinstance(src, SRange):
            out = [src.start, src.end]
        if isinstance(src, SRow) and src.index is not None:
            out = [src.index]
        for a in getattr(src, 'adaptors', ()):
            if a.body is not None:
                out.append(a.body)
        return out
    if isinstance(q, Filter):
        return [q.cond]
    if isinstance(q, Let):
        return [q.expr]
    if isinstance(q, OrderBy):
        return [q.key]
    return []


def nested_work(e, env):
    """The generator steps of the comprehensions nested in `e`, once."""
    if isinstance(e, Nested):
        return e.comp.check(env)[2]
    return sum(nested_work(c, env) for c in e.children())


_COUNTER = [0]


def fresh(base):
    _COUNTER[0] += 1
    return f'__{base}{_COUNTER[0]}'


def check_qualifiers(quals, env, top):
    """Binds the qualifiers' variables in `env` (in place); returns (most elements, work).
    Remembers each node's environment for rendering."""
    count = 1
    work = 0
    seen_gen = False
    for q in quals:
        object.__setattr__(q, '_env', dict(env))
        if isinstance(q, Gen):
            elem, size = q.src.elem(env)
            if isinstance(q.src, SData) and elem[0] == 'row' and not isinstance(q.pat, (PName, PWild)):
                raise Bad('a row bound to a pattern')
            binds = q.pat.bind(elem)
            for n in binds:
                if n in env:
                    raise Bad('shadowing')
            env.update(binds)
            count *= max(size, 0)
            work += max(count, 1)
            seen_gen = True
        elif isinstance(q, Filter):
            if not seen_gen:
                raise Bad('filter before a generator')
            if q.cond.typ(env)[0] != 'bool':
                raise Bad('filter not bool')
            work += count * nested_work(q.cond, env)
        elif isinstance(q, Let):
            t = q.expr.typ(env)
            work += max(count, 1) * nested_work(q.expr, env)
            if isinstance(q.pat, PTuple):
                binds = q.pat.bind(t)
            else:
                binds = q.pat.bind(t)
            for n in binds:
                if n in env:
                    raise Bad('shadowing')
            env.update(binds)
        elif isinstance(q, OrderBy):
            if not seen_gen:
                raise Bad('transform before a generator')
            kt = q.key.typ(env)
            if kt[0] not in ('int', 'bool', 'tuple'):
                raise Bad('key type')
            if kt[0] == 'tuple' and any(x[0] not in ('int', 'bool') for x in kt[1]):
                raise Bad('key tuple')
            if nested_work(q.key, env):
                raise Bad('a comprehension in a key')
        elif isinstance(q, (Take, Skip)):
            if not seen_gen:
                raise Bad('transform before a generator')
            if q.var is not None:
                t = env.get(q.var)
                if t is None or t[0] != 'int' or t[1] != 'usize':
                    raise Bad('take of a non-usize')
            if isinstance(q, Take):
                n = q.n if q.var is None else env[q.var][3]
                count = min(count, n)
        elif isinstance(q, GroupBy):
            if not seen_gen:
                raise Bad('transform before a generator')
            for k in q.keys:
                t = env.get(k)
                if t is None or t[0] != 'int':
                    raise Bad('group key')
            captured = env.get('$captured', ())
            live = [n for n in env if not n.startswith('$') and n not in captured]
            for n in live:
                if n in q.keys:
                    continue
                t = env[n]
                if t[0] not in ('int', 'bool'):
                    raise Bad('a group of compound values')
                env[n] = ('slice', t, count)
            object.__setattr__(q, '_others', [n for n in live if n not in q.keys])
        if work > 20000:
            raise Bad('too much work')
    return count, work


def render_qual(q, env):
    if isinstance(q, Gen):
        return f'{q.pat.render()} <- {q.src.render("par", q._env)}'
    if isinstance(q, Filter):
        return q.cond.render('par')
    if isinstance(q, Let):
        return f'let {q.pat.render()} = {q.expr.render("par")}'
    if isinstance(q, OrderBy):
        return f'order by {q.key.render("par")}' + (' desc' if q.desc else '')
    if isinstance(q, Take):
        return f'take {q.var or q.n}'
    if isinstance(q, Skip):
        return f'skip {q.var or q.n}'
    if isinstance(q, GroupBy):
        keys = q.keys[0] if len(q.keys) == 1 else '(' + ', '.join(q.keys) + ')'
        return f'group by {keys}'
    raise Bad(q)


# ----------------------------------------------------------------------------------------------
# The loops


def scope_names(env):
    return [n for n in env if not n.startswith('$')]


def tuple_pattern(names):
    return '(' + ''.join(n + ', ' for n in names).rstrip(' ') + ')'


def loop_pattern(p):
    """The pattern in loop code: the same Rust pattern."""
    return p.render()


def branch_loops(quals, env0, inner):
    """Statements running `inner` once per element of the qualifiers, in order; transforms
    become stages over a `Vec` of the variables in scope."""
    # Split at transforms.
    segments = [[]]
    transforms = []
    for q in quals:
        if isinstance(q, TRANSFORMS):
            transforms.append(q)
            segments.append([])
        else:
            segments[-1].append(q)
    if not transforms:
        return nest(quals, inner)
    code = []
    stage = None
    scope = None
    for k, t in enumerate(transforms):
        seg = segments[k]
        names = scope_after(seg, scope)
        st = fresh('st')
        # A group's values are a `Vec` here: each element of the stage gets its own copy.
        push = f'{st}.push({tuple_pattern([n + ".clone()" for n in names])});'
        body = nest(seg, push)
        if stage is not None:
            body = f'for {tuple_pattern(scope)} in {stage} {{ {body} }}'
        code.append(f'let mut {st} = Vec::new(); {body}')
        stage, scope = transform_code(t, st, names, code)
    body = nest(segments[-1], inner)
    code.append(f'for {tuple_pattern(scope)} in {stage} {{ {body} }}')
    return ' '.join(code)


def scope_after(seg, scope):
    names = list(scope or [])
    for q in seg:
        for n in qual_binds(q):
            names.append(n)
    return names


def transform_code(t, st, names, code):
    out = fresh('st')
    tp = tuple_pattern(names)
    if isinstance(t, OrderBy):
        keyed = fresh('keyed')
        cmp = '{b}.0.cmp(&{a}.0)' if t.desc else '{a}.0.cmp(&{b}.0)'
        code.append(
            f'let mut {keyed}: Vec<_> = {st}.into_iter().map(|__t| {{ '
            f'#[allow(unused_variables)] let {tp} = __t.clone(); ({t.key.render("loop")}, __t) }}).collect(); '
            f'{keyed}.sort_by(|__a, __b| {cmp.format(a="__a", b="__b")}); '
            f'let {out}: Vec<_> = {keyed}.into_iter().map(|(_, __t)| __t).collect();')
        return out, names
    if isinstance(t, Take):
        n = t.var or t.n
        code.append(f'let mut {out} = {st}; {out}.truncate({n});')
        return out, names
    if isinstance(t, Skip):
        n = t.var or t.n
        code.append(f'let {out}: Vec<_> = {st}.into_iter().skip({n}).collect();')
        return out, names
    if isinstance(t, GroupBy):
        env = t._env
        keys = list(t.keys)
        others = [n for n in names if n not in keys]
        kt = tuple_pattern([rust_type(env[k]) for k in keys])
        ot = tuple_pattern([f'Vec<{rust_type(env[o])}>' for o in others])
        g = fresh('groups')
        pushes = ' '.join(f'__e.{i}.push({o});' for i, o in enumerate(others))
        code.append(
            f'let mut {g}: std::collections::BTreeMap<{kt}, {ot}> = Default::default(); '
            f'for {tp} in {st} {{ #[allow(unused_variables)] let __e = {g}.entry({tuple_pattern(keys)}).or_default(); {pushes} }} '
            f'let {out}: Vec<_> = {g}.into_iter().map(|({tuple_pattern(keys)}, {tuple_pattern(others)})| '
            f'{tuple_pattern(keys + others)}).collect();')
        return out, keys + others
    raise Bad(t)


def nest(quals, inner):
    code = inner
    for q in reversed(quals):
        if isinstance(q, Gen):
            it = q.src.loop_iter(q._env)
            if q.pat.refutable():
                e = fresh('e')
                code = (f'for {e} in {it} {{ #[allow(unreachable_patterns)] match {e} '
                        f'{{ {q.pat.render()} => {{ {code} }} _ => {{}} }} }}')
            else:
                code = f'for {q.pat.render()} in {it} {{ {code} }}'
        elif isinstance(q, Filter):
            code = f'if {q.cond.render("loop")} {{ {code} }}'
        elif isinstance(q, Let):
            code = f'let {q.pat.render()} = {q.expr.render("loop")}; {code}'
        else:
            raise Bad('a transform in a nest')
    return code


def zipped_loops(branches, env, inner):
    code = []
    names_of = []
    vecs = []
    for b in branches:
        names = scope_after(b, [])
        v = fresh('branch')
        code.append(f'let mut {v} = Vec::new(); ' + nest(b, f'{v}.push({tuple_pattern(names)});'))
        names_of.append(names)
        vecs.append(v)
    it = f'{vecs[0]}.into_iter()'
    pat = tuple_pattern(names_of[0])
    for v, names in zip(vecs[1:], names_of[1:]):
        it += f'.zip({v})'
        pat = f'({pat}, {tuple_pattern(names)})'
    code.append(f'for {pat} in {it} {{ {inner} }}')
    return ' '.join(code)


def finish_code(t, out, h):
    k = t.kind
    if k == 'par':
        return out
    if k == 'sum':
        zero = '0.0' if h[0] == 'float' else '0'
        return f'{out}.into_iter().fold({zero}{h[1]}, |a, b| a + b)'
    if k == 'product':
        one = '1.0' if h[0] == 'float' else '1'
        return f'{out}.into_iter().fold({one}{h[1]}, |a, b| a * b)'
    if k == 'min':
        return f'{out}.into_iter().min()'
    if k == 'max':
        return f'{out}.into_iter().max()'
    if k == 'count':
        return f'{out}.len()'
    if k == 'any':
        return f'{out}.into_iter().any(|b| b)'
    if k == 'all':
        return f'{out}.into_iter().all(|b| b)'
    if k == 'reduce':
        closure, identity = REDUCE_OPS[t.op]
        ty = h[1]
        return f'{out}.into_iter().fold({identity.format(t=ty)}, {closure.format(t=ty)})'
    if k in ('min_by_key', 'max_by_key'):
        ty = rust_type(h)
        f = 'min_by_key' if k == 'min_by_key' else 'max_by_key'
        return f'{out}.into_iter().{f}(|{t.key_param}: &{ty}| {t.key.render("loop")})'
    raise Bad(k)


def prepare(comp, env):
    """Checks `comp` (and the comprehensions nested in it) in `env`, remembering what rendering
    needs; returns (type, count, work) or raises Bad."""
    result = comp.check(env)
    object.__setattr__(comp, '_env', env)
    # The head's type, for the terminal's rendering.
    full_env = dict(env)
    if len(comp.branches) > 1:
        for b in comp.branches:
            benv = dict(env)
            check_qualifiers(b, benv, top=True)
            full_env.update(benv)
    else:
        check_qualifiers(comp.branches[0], full_env, top=True)
    object.__setattr__(comp, '_head_type', comp.head.typ(full_env))
    for e in all_exprs(comp):
        for n in nested_in(e):
            n_env = nested_env(comp, n, env)
            prepare(n.comp, n_env)
    return result


def all_exprs(comp):
    out = [comp.head]
    for b in comp.branches:
        for q in b:
            out.extend(q_exprs(q))
    if comp.terminal.key is not None:
        out.append(comp.terminal.key)
    return out


def nested_in(e):
    if isinstance(e, Nested):
        return [e]
    return [n for c in e.children() for n in nested_in(c)]


def nested_env(comp, n, env):
    """The environment a nested comprehension sees: where it stands among the qualifiers."""
    full_env = dict(env)
    for b in comp.branches:
        for q in b:
            if any(n is x for e in q_exprs(q) for x in nested_in(e)):
                return dict(q._env) if hasattr(q, '_env') else full_env
        benv = dict(env)
        check_qualifiers(b, benv, top=True)
        full_env.update(benv)
    return full_env
