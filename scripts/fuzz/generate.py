"""Random, well-typed comprehensions over the documented language (see grammar.py).

`Maker(seed).case()` draws one case: its captured data and its comprehension, checked to have
one right answer (no overflow, no index out of bounds, no division by zero) and to stay small
(a few thousand generator steps). The same seed gives the same case on every machine.
"""

import random

from grammar import (
    INTS, SIGNED, Abs, Adaptor, Bad, Bin, BLit, Cast, Cmp, Comp, Data, Field, Filter, FLit, Gen,
    GroupBy, If, Len, Let, Lit, Logic, Nested, Neg, OrderBy, PName, PRange, PSome, PTuple, PWild,
    SArray, SData, Skip, SRange, SRow, Take, Terminal, ToVec, Tup, Unit, Var, prepare, qual_binds,
    q_exprs, all_exprs, nested_in, TRANSFORMS)

# Most cases use the common types; every integer type appears.
INT_WEIGHTS = {'i32': 6, 'i64': 4, 'u8': 3, 'u32': 3, 'usize': 4, 'i8': 3, 'i16': 2, 'u16': 2,
               'u64': 3, 'isize': 2, 'i128': 0.3, 'u128': 0.3}
# Variables named as the device's C dialects name their own things: the kernel writer must
# rename them (back/kernel/keywords.rs).
RESERVED = ['int', 'float', 'double', 'half', 'kernel', 'global', 'local', 'private', 'constant',
            'signed', 'unsigned', 'long', 'short', 'sizeof', 'register', 'volatile', 'restrict',
            'inline', 'switch', 'case', 'goto', 'float2', 'int4', 'uchar', 'ulong', 'size_t',
            'pc_t', 'pc_i', 'pc_v1', 'pc_pass', 'get_global_id', 'get_local_id', 'barrier',
            'atomic_add', 'atomic_inc', 'printf', 'half2', 'uint', 'select', 'clamp', 'mad',
            'convert_int', 'max', 'min', 'abs']
PLAIN = ['x', 'y', 'z', 'i', 'j', 'k', 'u', 'v', 'w', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h',
         'p', 'q', 'r', 's', 't']
DATA_NAMES = ['xs', 'ys', 'ps', 'os', 'rows', 'jg', 'ms', 'vs']


def weighted(rng, table):
    keys = list(table)
    return rng.choices(keys, weights=[table[k] for k in keys])[0]


class Maker:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.used_names = set()

    # -- names and data ----------------------------------------------------------------------

    def name(self):
        rng = self.rng
        for _ in range(100):
            n = rng.choice(RESERVED) if rng.random() < 0.12 else rng.choice(PLAIN)
            if n not in self.used_names:
                self.used_names.add(n)
                return n
        n = f'v{len(self.used_names)}'
        self.used_names.add(n)
        return n

    def int_type(self):
        return weighted(self.rng, INT_WEIGHTS)

    def small(self, ty, lo=-8, hi=20):
        tlo, thi = INTS[ty]
        return self.rng.randint(max(lo, tlo), min(hi, thi))

    def data_values(self, ty, n):
        lo = -12 if ty in SIGNED else 0
        return tuple(self.small(ty, lo, 25) for _ in range(n))

    def make_data(self):
        rng = self.rng
        out = []
        names = rng.sample(DATA_NAMES, k=len(DATA_NAMES))
        for name in names[:rng.choice([1, 2, 2, 3])]:
            kind = weighted(rng, {'vec': 4, 'pairs': 2, 'opts': 2, 'rows': 2, 'jag': 3,
                                  'scalar': 1})
            ty = self.int_type()
            n = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 9])
            if kind == 'vec':
                out.append(Data(name, 'vec', (ty,), self.data_values(ty, n)))
            elif kind == 'pairs':
                ty2 = self.int_type()
                a, b = self.data_values(ty, n), self.data_values(ty2, n)
                out.append(Data(name, 'pairs', (ty, ty2), tuple(zip(a, b))))
            elif kind == 'opts':
                vals = tuple(None if rng.random() < 0.35 else v for v in self.data_values(ty, n))
                out.append(Data(name, 'opts', (ty,), vals))
            elif kind in ('rows', 'jag'):
                pairs = rng.random() < 0.25
                ty2 = self.int_type()
                rows = []
                for _ in range(rng.choice([0, 1, 2, 3, 4, 5, 6])):
                    length = rng.choice([0, 0, 1, 2, 3, 4, 5, 8])
                    if rng.random() < 0.05:
                        length = 40  # one long row among short ones
                    if pairs:
                        # `(c, v)`: a column index (usize, small) and a value.
                        cols = self.data_values('usize', length)
                        rows.append(tuple(zip([c % 6 for c in cols],
                                              self.data_values(ty2, length))))
                    else:
                        rows.append(self.data_values(ty, length))
                elem = ('usize', ty2) if pairs else (ty,)
                out.append(Data(name, kind, elem, tuple(rows)))
            else:
                sty = rng.choice(['usize', 'usize', 'i32', 'u8', 'i64'])
                out.append(Data(name, 'scalar', (sty,), (self.small(sty, 0, 7),)))
        return out

    # -- expressions -------------------------------------------------------------------------

    def vars_of(self, env, pred):
        return [n for n, t in env.items() if not n.startswith('$') and pred(t)]

    def scalars(self, env, kind='int'):
        out = self.vars_of(env, lambda t: t[0] == kind)
        for n, d in env.items():
            if n.startswith('$') and isinstance(d, Data) and d.kind == 'scalar' and kind == 'int':
                out.append(d.name)
        return out

    def var_type(self, env, name):
        if name in env:
            return env[name]
        return env['$' + name].scalar_type()

    def typed_env(self, env):
        return typed_env(env)

    def pick_type(self, env):
        """An integer type, mostly one of the variables'."""
        ints = [self.var_type(env, n)[1] for n in self.scalars(env)]
        if ints and self.rng.random() < 0.85:
            return self.rng.choice(ints)
        return self.int_type()

    def lit(self, ty, suffix=True, lo=-8, hi=20):
        return Lit(self.small(ty, lo, hi), ty, suffix)

    def ok(self, e, env, want=None):
        try:
            t = e.typ(self.typed_env(env))
        except Bad:
            return False
        if want is not None and (t[0] != 'int' or t[1] != want):
            return False
        return True

    def expr(self, env, ty, depth, nested=False):
        """An expression of the integer type `ty`."""
        rng = self.rng
        for _ in range(12):
            e = self._expr(env, ty, depth, nested)
            if e is not None and self.ok(e, env, ty):
                return e
        return Lit(self.small(ty, 0, 5), ty)

    def _expr(self, env, ty, depth, nested):
        rng = self.rng
        vars_ = [n for n in self.scalars(env) if self.var_type(env, n)[1] == ty]
        others = [n for n in self.scalars(env) if self.var_type(env, n)[1] != ty]
        sized = self.vars_of(env, lambda t: t[0] in ('slice', 'row'))
        choices = {'var': 5 if vars_ else 0, 'lit': 1.5, 'arith': 4 if depth > 0 else 0,
                   'div': 1.5 if depth > 0 else 0, 'minmax': 1 if depth > 0 else 0,
                   'bits': 1 if depth > 0 else 0, 'shift': 0.6 if depth > 0 else 0,
                   'cast': 2 if others else 0.2, 'if': 0.7 if depth > 0 else 0,
                   'abs': 0.7 if ty in SIGNED and depth > 0 else 0,
                   'wrap': 0.4 if depth > 0 else 0,
                   'len': 1 if ty == 'usize' and sized else 0,
                   'nested': 1.2 if nested and depth > 0 else 0}
        kind = weighted(rng, choices)
        if kind == 'var':
            return Var(rng.choice(vars_))
        if kind == 'lit':
            return self.lit(ty)
        if kind == 'arith':
            op = rng.choice(['+', '+', '-', '*'])
            a = self.expr(env, ty, depth - 1, nested)
            b = self.operand(env, ty, depth - 1, op)
            return Bin(op, a, b) if rng.random() < 0.7 else Bin(op, b, a)
        if kind == 'div':
            op = rng.choice(['/', '%'])
            a = self.expr(env, ty, depth - 1, nested)
            if rng.random() < 0.7:
                b = Lit(rng.randint(1, 7), ty, rng.random() < 0.5)
            else:
                b = Bin('+', self.expr(env, ty, 0), Lit(rng.randint(1, 3), ty, False))
            return Bin(op, a, b)
        if kind == 'minmax':
            return Bin(rng.choice(['min', 'max']), self.expr(env, ty, depth - 1, nested),
                       self.operand(env, ty, depth - 1, 'min'))
        if kind == 'bits':
            return Bin(rng.choice(['&', '|', '^']), self.expr(env, ty, depth - 1, nested),
                       Lit(rng.randint(0, 15), ty, rng.random() < 0.5))
        if kind == 'shift':
            return Bin(rng.choice(['<<', '>>']), self.expr(env, ty, depth - 1, nested),
                       Lit(rng.randint(0, 3), 'u32', False))
        if kind == 'cast':
            if others:
                return Cast(Var(rng.choice(others)), ty)
            return Cast(self.lit(self.int_type(), True, 0, 9), ty)
        if kind == 'if':
            return If(self.bool_expr(env, depth - 1, nested), self.expr(env, ty, depth - 1),
                      self.operand(env, ty, depth - 1, '+'))
        if kind == 'abs':
            return Abs(self.expr(env, ty, depth - 1, nested)) if rng.random() < 0.6 else \
                Neg(self.expr(env, ty, depth - 1, nested))
        if kind == 'wrap':
            return Bin(rng.choice(['wrapping_add', 'wrapping_sub', 'wrapping_mul']),
                       self.expr(env, ty, depth - 1), self.operand(env, ty, depth - 1, '+'))
        if kind == 'len':
            return Len(rng.choice(sized))
        if kind == 'nested':
            return self.nested_value(env, ty)
        return None

    def operand(self, env, ty, depth, op):
        """The second operand: often a literal, unsuffixed beside a typed first operand."""
        if self.rng.random() < 0.45:
            hi = 6 if op == '*' else 12
            return Lit(self.small(ty, -4, hi), ty, self.rng.random() < 0.4)
        return self.expr(env, ty, max(depth, 0))

    def bool_expr(self, env, depth, nested=False):
        rng = self.rng
        for _ in range(10):
            kind = weighted(rng, {'cmp': 6, 'mod': 2, 'logic': 2 if depth > 0 else 0,
                                  'lit': 0.2,
                                  'var': 1 if self.vars_of(env, lambda t: t[0] == 'bool') else 0,
                                  'nested': 0.8 if nested and depth > 0 else 0})
            if kind == 'cmp':
                ty = self.pick_type(env)
                e = Cmp(rng.choice(['<', '<=', '>', '>=', '==', '!=']),
                        self.expr(env, ty, depth), self.operand(env, ty, 0, '<'))
            elif kind == 'mod':
                ty = self.pick_type(env)
                k = rng.randint(2, 5)
                e = Cmp(rng.choice(['==', '!=']),
                        Bin('%', self.expr(env, ty, depth), Lit(k, ty, False)),
                        Lit(rng.randint(0, k - 1), ty, False))
            elif kind == 'logic':
                op = rng.choice(['&&', '||', '!'])
                a = self.bool_expr(env, depth - 1, nested)
                e = Logic('!', a) if op == '!' else Logic(op, a, self.bool_expr(env, depth - 1))
            elif kind == 'lit':
                e = BLit(rng.random() < 0.5)
            elif kind == 'var':
                e = Var(rng.choice(self.vars_of(env, lambda t: t[0] == 'bool')))
            else:
                e = self.nested_flag(env)
            if e is not None and self.ok(e, env):
                return e
        return BLit(True)

    def float_expr(self, env, ty, depth):
        rng = self.rng
        ints = self.scalars(env)
        if depth <= 0 or rng.random() < 0.3:
            if ints and rng.random() < 0.8:
                return Cast(Var(rng.choice(ints)), ty)
            return FLit(rng.randint(-8, 8) * 0.25, ty)
        op = rng.choice(['+', '-', '*'])
        a = self.float_expr(env, ty, depth - 1)
        b = FLit(rng.randint(-8, 8) * 0.25, ty) if op == '*' else self.float_expr(env, ty, 0)
        return Bin(op, a, b)

    # -- nested comprehensions ---------------------------------------------------------------

    def nested_value(self, env, ty):
        """A reduction of a comprehension nested in an expression, of type `ty`."""
        rng = self.rng
        kind = weighted(rng, {'sum': 4, 'count': 2 if ty == 'usize' else 0, 'reduce': 1.5,
                              'product': 0.5})
        inner = self.inner_comp(env, ty if kind != 'count' else None, kind)
        return Nested(inner) if inner is not None else None

    def nested_flag(self, env):
        c = self.inner_comp(env, 'bool', self.rng.choice(['any', 'all']))
        return Nested(c) if c is not None else None

    def nested_head(self, env):
        """A nested comprehension as (part of) a head: a `Vec`, an `Option`, a value."""
        rng = self.rng
        kind = weighted(rng, {'par': 3, 'sum': 3, 'min': 1.5, 'max': 1.5, 'count': 1.5,
                              'any': 1, 'all': 0.7, 'reduce': 1, 'product': 0.3})
        ty = 'bool' if kind in ('any', 'all') else (None if kind == 'count' else self.pick_type(env))
        c = self.inner_comp(env, ty, kind)
        return Nested(c) if c is not None else None

    def inner_comp(self, env, ty, kind):
        rng = self.rng
        for _ in range(6):
            inner_env = dict(env)
            quals = []
            count = 1
            for g in range(rng.choice([1, 1, 1, 2])):
                q = self.generator(inner_env, first=False, top=False)
                if q is None:
                    break
                quals.append(q)
                if rng.random() < 0.3:
                    quals.append(Filter(self.bool_expr(inner_env, 1)))
                if rng.random() < 0.15:
                    n = self.name()
                    t = self.pick_type(inner_env)
                    quals.append(Let(PName(n), self.expr(inner_env, t, 1)))
                    inner_env[n] = ('int', t) + INTS[t]
                    try:
                        inner_env[n] = quals[-1].expr.typ(self.typed_env(inner_env))
                    except Bad:
                        quals.pop()
            if not quals or not isinstance(quals[0], Gen):
                continue
            if kind in ('any', 'all'):
                head = self.bool_expr(inner_env, 1)
            elif kind == 'count':
                head = Unit() if rng.random() < 0.5 else self.expr(inner_env, self.pick_type(inner_env), 1)
            elif kind == 'product':
                head = Bin('%', self.expr(inner_env, ty, 0), Lit(3, ty, False))
            else:
                head = self.expr(inner_env, ty, 1)
            term = Terminal(kind)
            if kind == 'reduce':
                ops = ['max', 'min', 'wrapping_add']
                if self.ok(head, inner_env) and head.typ(self.typed_env(inner_env))[2] >= 0:
                    ops += ['xor', 'or']
                term = Terminal('reduce', op=rng.choice(ops))
            c = Comp(term, head, (tuple(quals),))
            try:
                c.check(self.typed_env(env))
            except Bad:
                continue
            return c
        return None

    # -- generators --------------------------------------------------------------------------

    def data(self, env, kinds):
        return [d for n, d in env.items() if isinstance(d, Data) and d.kind in kinds]

    def pattern(self, elem, env):
        rng = self.rng
        if elem[0] == 'int':
            r = rng.random()
            if r < 0.75:
                return PName(self.name())
            if r < 0.82:
                return PWild()
            lo = rng.randint(elem[2], max(elem[2], min(elem[3], elem[2] + 6)))
            hi = lo + rng.randint(0, 6)
            if r < 0.87:
                return PRange(lo, hi)
            if r < 0.95:
                return PRange(lo, hi, self.name())
            alts = tuple(sorted(set(rng.randint(elem[2], max(elem[2], min(elem[3], elem[2] + 9)))
                                    for _ in range(2))))
            if len(alts) < 2:
                return PRange(lo, hi, self.name())
            return PRange(0, 0, self.name(), alts)
        if elem[0] == 'tuple':
            items = []
            for t in elem[1]:
                r = rng.random()
                if r < 0.7:
                    items.append(PName(self.name()))
                elif r < 0.85:
                    items.append(PWild())
                else:
                    items.append(PRange(rng.randint(t[2], max(t[2], min(t[3], t[2] + 4))), None))
            return PTuple(tuple(items))
        if elem[0] == 'option':
            r = rng.random()
            if r < 0.75:
                return PSome(PName(self.name()))
            if r < 0.85:
                return PSome(PWild())
            if r < 0.92:
                return PSome(PRange(0, 9, self.name()))
            return PWild()
        if elem[0] == 'row':
            return PName(self.name()) if rng.random() < 0.9 else PWild()
        raise Bad('no pattern')

    def adaptors(self, base_ty, env, dependent):
        rng = self.rng
        out = []
        for _ in range(rng.choice([0, 0, 0, 1, 1, 2])):
            kind = weighted(rng, {'rev': 1, 'step': 1, 'map': 1.3})
            if kind == 'rev':
                out.append(Adaptor('rev'))
            elif kind == 'step':
                out.append(Adaptor('step', step=rng.randint(1, 3)))
            else:
                param = self.name()
                inner = dict(env)
                inner[param] = ('int', base_ty) + (-8, 20)
                body = self.expr(inner, base_ty, 1)
                if param not in body.uses():
                    # A closure that ignores its parameter draws a warning in plain Rust too.
                    body = Bin(rng.choice(['+', '-', 'max']), Var(param), body)
                out.append(Adaptor('map', param=param, body=body,
                                   annotate=rng.random() < 0.3))
                return out  # a map's output may change the element's interval: last
        return out

    def range_source(self, env, first):
        rng = self.rng
        for _ in range(10):
            ty = self.pick_type(env) if not first else self.int_type()
            vars_ = [n for n in self.scalars(env) if self.var_type(env, n)[1] == ty]
            inclusive = rng.random() < 0.3
            form = rng.random()
            if vars_ and not first and form < 0.7:
                v = Var(rng.choice(vars_))
                k = rng.randint(0, 6)
                f = rng.random()
                if f < 0.3:
                    start, end = Lit(self.small(ty, -3, 3), ty, False), v
                elif f < 0.55:
                    start, end = v, Bin('+', v, Lit(k, ty, False))
                elif f < 0.7:
                    start, end = v, Lit(self.small(ty, 0, 9), ty, False)
                elif f < 0.85:
                    start, end = Bin('-', v, Lit(k, ty, False)), v
                else:
                    start, end = Bin('*', v, Lit(2, ty, False)), Bin('+', v, Lit(k, ty, False))
            else:
                lo = self.small(ty, -5, 6)
                size = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 10])
                hi = lo + size
                if rng.random() < 0.05:
                    hi = lo - 2  # reversed: empty
                start = Lit(lo, ty, rng.random() < 0.4)
                end = Lit(hi, ty, True)
                if not INTS[ty][0] <= hi <= INTS[ty][1]:
                    continue
                scalars = [d for d in self.data(env, ['scalar']) if d.elem[0] == ty]
                sized = self.data(env, ['vec', 'pairs', 'opts', 'rows', 'jag'])
                if scalars and rng.random() < 0.3:
                    start, end = Lit(0, ty, False), Var(rng.choice(scalars).name)
                elif ty == 'usize' and sized and rng.random() < 0.4:
                    start, end = Lit(0, ty, False), Len(rng.choice(sized).name)
            src = SRange(start, end, inclusive, tuple(self.adaptors(ty, env, not first)))
            try:
                elem, size = src.elem(self.typed_env(env))
            except Bad:
                continue
            if size > 12:
                continue
            return src
        return SRange(Lit(0, 'i32', True), Lit(3, 'i32', True), False)

    def generator(self, env, first, top):
        """A generator; binds its pattern in `env`."""
        rng = self.rng
        for _ in range(12):
            choices = {'range': 5, 'data': 3 if self.data(env, ['vec', 'pairs', 'opts']) else 0,
                       'rowsdata': 1.5 if self.data(env, ['rows', 'jag']) else 0,
                       'array': 0.5,
                       'index': 2.5 if not first and self.data(env, ['rows', 'jag']) and
                       self.scalars(env) else 0,
                       'rowvar': 3 if self.vars_of(env, lambda t: t[0] in ('row', 'slice')) else 0}
            kind = weighted(rng, choices)
            if kind == 'range':
                src = self.range_source(env, first)
            elif kind == 'data':
                d = rng.choice(self.data(env, ['vec', 'pairs', 'opts']))
                form = weighted(rng, {'ref': 6, 'clone': 1, 'tail': 1 if d.kind != 'opts' else 0})
                src = SData(d.name, form)
            elif kind == 'rowsdata':
                src = SData(rng.choice(self.data(env, ['rows', 'jag'])).name)
            elif kind == 'array':
                ty = self.int_type()
                src = SArray(self.data_values(ty, rng.randint(1, 5)), ty)
            elif kind == 'index':
                d = rng.choice(self.data(env, ['rows', 'jag']))
                if not d.values:
                    continue
                idx = self.index_expr(env, len(d.values))
                if idx is None:
                    continue
                form = 'row' if d.kind == 'jag' else rng.choice(['index', 'refindex'])
                elem = d.row_elem_type()
                ad = tuple(self.adaptors(elem[1], env, True)) if elem[0] == 'int' else ()
                src = SRow(d.name, idx, form, adaptors=ad)
            else:
                v = rng.choice(self.vars_of(env, lambda t: t[0] in ('row', 'slice')))
                elem = env[v][1]
                ad = tuple(self.adaptors(elem[1], env, True)) if elem[0] == 'int' else ()
                src = SRow(None, None, 'var', var=v, adaptors=ad)
            try:
                elem, size = src.elem(self.typed_env(env))
            except Bad:
                continue
            if elem[0] == 'row' and not top:
                continue
            try:
                pat = self.pattern(elem, env)
                binds = pat.bind(elem)
            except Bad:
                continue
            env.update(binds)
            return Gen(pat, src)
        return None

    def index_expr(self, env, length):
        rng = self.rng
        for _ in range(6):
            names = self.scalars(env)
            if not names:
                return None
            n = rng.choice(names)
            t = self.var_type(env, n)
            v = Var(n) if t[1] == 'usize' else Cast(Var(n), 'usize')
            if t[2] < 0:
                continue
            e = v if t[3] < length and rng.random() < 0.7 else Bin('%', v, Lit(length, 'usize', False))
            if self.ok(e, env, 'usize'):
                tt = e.typ(self.typed_env(env))
                if tt[3] < length:
                    return e
        return None

    # -- qualifiers and cases ----------------------------------------------------------------

    def qualifiers(self, env, top, transforms):
        rng = self.rng
        quals = []
        if rng.random() < 0.1:
            n = self.name()
            ty = self.int_type()
            quals.append(Let(PName(n), self.lit(ty, True, 0, 9)))
            env[n] = quals[-1].expr.typ(env)
        n_gen = weighted(rng, {1: 3.5, 2: 4.5, 3: 2})
        n_transforms = 0
        for g in range(n_gen):
            q = self.generator(env, first=(g == 0), top=top)
            if q is None:
                break
            quals.append(q)
            for _ in range(rng.choice([0, 0, 0, 1, 1, 2])):
                r = rng.random()
                if r < 0.5:
                    quals.append(Filter(self.bool_expr(env, 2, nested=True)))
                elif r < 0.85:
                    n = self.name()
                    if rng.random() < 0.15:
                        e = self.bool_expr(env, 1)
                    elif rng.random() < 0.15:
                        # A key of a few values, for a `group by` to gather real groups.
                        ty = self.pick_type(env)
                        e = Bin('%', self.expr(env, ty, 0), Lit(rng.randint(2, 4), ty, False))
                    else:
                        e = self.expr(env, self.pick_type(env), 2, nested=True)
                    if rng.random() < 0.12:
                        n2 = self.name()
                        e2 = self.expr(env, self.pick_type(env), 1)
                        quals.append(Let(PTuple((PName(n), PName(n2))), Tup((e, e2))))
                        try:
                            te = self.typed_env(env)
                            t1, t2 = e.typ(te), e2.typ(te)
                        except Bad:
                            quals.pop()
                            continue
                        env[n], env[n2] = t1, t2
                    else:
                        quals.append(Let(PName(n), e))
                        try:
                            env[n] = e.typ(self.typed_env(env))
                        except Bad:
                            quals.pop()
                elif transforms and n_transforms < 2:
                    t = self.transform(env)
                    if t is not None:
                        quals.append(t)
                        n_transforms += 1
            if transforms and n_transforms < 2 and rng.random() < 0.22:
                t = self.transform(env)
                if t is not None:
                    quals.append(t)
                    n_transforms += 1
        return quals

    def transform(self, env):
        rng = self.rng
        kind = weighted(rng, {'order': 3, 'take': 2, 'skip': 1.2, 'group': 2.5})
        if kind == 'order':
            r = rng.random()
            if r < 0.6:
                key = self.expr(env, self.pick_type(env), 1)
            elif r < 0.85:
                key = Tup((self.expr(env, self.pick_type(env), 0),
                           self.expr(env, self.pick_type(env), 1)))
            else:
                key = self.bool_expr(env, 0)
            return OrderBy(key, rng.random() < 0.4)
        if kind in ('take', 'skip'):
            scalars = [d for d in self.data(env, ['scalar']) if d.elem[0] == 'usize']
            var = rng.choice(scalars).name if scalars and rng.random() < 0.25 else None
            n = rng.randint(0, 7)
            return Take(n, var) if kind == 'take' else Skip(n, var)
        live = [n for n in env if not n.startswith('$')]
        if any(env[n][0] not in ('int', 'bool') for n in live):
            return None
        ints = [n for n in live if env[n][0] == 'int']
        if not ints:
            return None
        keys = tuple(rng.sample(ints, k=1 if len(ints) == 1 or rng.random() < 0.75 else 2))
        g = GroupBy(keys)
        for n in live:
            if n not in keys:
                env[n] = ('slice', env[n], 10**6)
        return g

    def head(self, env, terminal):
        rng = self.rng
        k = terminal
        if k in ('any', 'all'):
            return self.bool_expr(env, 2, nested=True)
        if k == 'count':
            return Unit() if rng.random() < 0.4 else self.expr(env, self.pick_type(env), 1)
        if k == 'product':
            ty = self.pick_type(env)
            return Bin('%', self.expr(env, ty, 1), Lit(3, ty, False))
        if k in ('min_by_key', 'max_by_key'):
            return Tup((self.expr(env, self.pick_type(env), 1),
                        self.expr(env, self.pick_type(env), 1)))
        if k == 'sum' and rng.random() < 0.15:
            return self.float_expr(env, 'f64', 2)
        if k != 'par':
            return self.expr(env, self.pick_type(env), 2, nested=True)
        r = rng.random()
        slices = self.vars_of(env, lambda t: t[0] == 'slice')
        if r < 0.4:
            return self.expr(env, self.pick_type(env), 2, nested=True)
        if r < 0.65:
            items = []
            for _ in range(rng.choice([2, 2, 3])):
                rr = rng.random()
                if slices and rr < 0.2:
                    items.append(ToVec(rng.choice(slices)))
                elif rr < 0.3:
                    n = self.nested_head(env)
                    items.append(n if n is not None else self.expr(env, self.pick_type(env), 1))
                else:
                    items.append(self.expr(env, self.pick_type(env), 1))
            return Tup(tuple(items))
        if r < 0.85:
            n = self.nested_head(env)
            if n is not None:
                return n
        if r < 0.92:
            return self.float_expr(env, rng.choice(['f32', 'f64']), 2)
        if slices and rng.random() < 0.5:
            return ToVec(rng.choice(slices))
        return self.bool_expr(env, 1, nested=True)

    def terminal(self, kind, head_type):
        rng = self.rng
        if kind == 'reduce':
            op = rng.choice(['xor', 'or', 'and', 'max', 'min', 'wrapping_add', 'add'])
            return Terminal('reduce', op=op)
        if kind in ('min_by_key', 'max_by_key'):
            r = rng.random()
            if r < 0.4:
                key = Field(Var('p'), rng.randint(0, 1))
            elif r < 0.7:
                ty = head_type[1][1][1]  # the head's second component's integer type
                key = Bin('%', Field(Var('p'), 1), Lit(rng.randint(2, 4), ty, False))
            else:
                key = Tup((Field(Var('p'), 1), Field(Var('p'), 0)))
            return Terminal(kind, key=key)
        return Terminal(kind)

    def case(self):
        """A checked case: (comp, env), ready to render."""
        rng = self.rng
        for _ in range(200):
            self.used_names = set()
            data = self.make_data()
            env = {'$' + d.name: d for d in data}
            kind = weighted(rng, {'par': 40, 'sum': 9, 'product': 2, 'min': 5, 'max': 5,
                                  'count': 5, 'any': 3, 'all': 3, 'reduce': 6,
                                  'min_by_key': 3, 'max_by_key': 3})
            try:
                if rng.random() < 0.12 and kind not in ('min_by_key', 'max_by_key'):
                    branches = []
                    benv_all = dict(env)
                    for b in range(rng.choice([2, 2, 3])):
                        benv = dict(env)
                        quals = self.qualifiers(benv, top=True, transforms=False)
                        quals = [q for q in quals if not isinstance(q, TRANSFORMS)]
                        branches.append(tuple(quals))
                        for n, t in benv.items():
                            if n not in env:
                                benv_all[n] = t
                    head_env = benv_all
                else:
                    quals = self.qualifiers(env, top=True, transforms=True)
                    if kind in ('sum', 'product', 'min', 'max', 'count', 'any', 'all'):
                        # Their result does not depend on the order: an `order by` not
                        # followed by `take` or `skip` is refused (tests/ui/order_by_in_sum).
                        quals = [q for k, q in enumerate(quals) if not isinstance(q, OrderBy)
                                 or any(isinstance(r, (Take, Skip)) for r in quals[k + 1:])]
                    branches = [tuple(quals)]
                    head_env = env
                head = self.head(head_env, kind)
                comp = Comp(Terminal(kind), head, tuple(branches), tuple(data))
                if kind in ('reduce', 'min_by_key', 'max_by_key'):
                    ht = head.typ(self.typed_env(head_env))
                    term = self.terminal(kind, ht)
                    if kind == 'reduce' and term.op in ('xor', 'or', 'and') and ht[2] < 0:
                        term = Terminal('reduce', op='max')
                    comp = Comp(term, head, tuple(branches), tuple(data))
                comp = drop_unused(comp)
                comp = drop_unused_data(comp)
                base_env = {'$' + d.name: d for d in comp.data}
                _t, count, work = prepare(comp, self.typed_env(base_env))
                if count > 3000 or work > 20000:
                    continue
                return comp
            except Bad:
                continue
        raise RuntimeError('no case')


def typed_env(env):
    """`env` with the captured scalars as variables (listed under `$captured`), for type
    checks."""
    out = dict(env)
    captured = set(env.get('$captured', ()))
    for n, d in env.items():
        if n.startswith('$') and isinstance(d, Data) and d.kind == 'scalar':
            out[d.name] = d.scalar_type()
            captured.add(d.name)
    out['$captured'] = frozenset(captured)
    return out


# ----------------------------------------------------------------------------------------------
# Names nothing reads become `_`, so that a correct comprehension draws no warning.


def used_names(comp):
    used = set()
    for e in all_exprs(comp):
        used |= e.uses()
        for n in nested_in(e):
            used |= used_names(n.comp)
    for b in comp.branches:
        for q in b:
            if isinstance(q, Gen):
                used |= q.src.uses()
            if isinstance(q, (Take, Skip)) and q.var:
                used.add(q.var)
            if isinstance(q, GroupBy):
                used |= set(q.keys)
    return used


def strip_pattern(p, used):
    if isinstance(p, PName):
        return p if p.name in used else PWild()
    if isinstance(p, PTuple):
        items = tuple(strip_pattern(i, used) for i in p.items)
        return PTuple(items)
    if isinstance(p, PSome):
        return PSome(strip_pattern(p.inner, used))
    if isinstance(p, PRange):
        return p if p.name is None or p.name in used else PRange(p.lo, p.hi, None, p.alts) \
            if not p.alts else PRange(p.alts[0], p.alts[0], None)
    return p


def drop_unused(comp, used=None):
    if used is None:
        used = used_names(comp)
    branches = []
    for b in comp.branches:
        quals = []
        for q in b:
            if isinstance(q, Gen):
                q = Gen(strip_pattern(q.pat, used), q.src)
            elif isinstance(q, Let):
                pat = strip_pattern(q.pat, used)
                if isinstance(pat, PTuple) and all(isinstance(i, PWild) for i in pat.items):
                    pat = PWild()
                q = Let(pat, q.expr)
            quals.append(q)
        branches.append(tuple(quals))
    head = rewrite_nested(comp.head, used)
    branches = [tuple(rewrite_q(q, used) for q in b) for b in branches]
    return Comp(comp.terminal, head, tuple(branches), comp.data)


def rewrite_q(q, used):
    if isinstance(q, Filter):
        return Filter(rewrite_nested(q.cond, used))
    if isinstance(q, Let):
        return Let(q.pat, rewrite_nested(q.expr, used))
    return q


def rewrite_nested(e, used):
    if isinstance(e, Nested):
        return Nested(drop_unused(e.comp, used))
    kids = e.children()
    if not kids:
        return e
    return e.rebuild([rewrite_nested(c, used) for c in kids])


def drop_unused_data(comp):
    used = used_names(comp)
    return Comp(comp.terminal, comp.head, comp.branches,
                tuple(d for d in comp.data if d.name in used))
