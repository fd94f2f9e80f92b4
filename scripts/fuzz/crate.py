"""Generated cases as one Rust crate: written, built (cases that do not compile are set
aside with rustc's message), and run on every backend (see harness.rs)."""

import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field

from grammar import prepare, rust_type
from generate import typed_env

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


@dataclass
class Outcome:
    """What happened to one case."""
    id: int
    kind: str = 'ok'  # ok, wrong, panic, compile, crash, hang, missing
    backends: dict = field(default_factory=dict)  # backend -> 'ok' | 'wrong ...' | 'panic ...'
    device: dict = field(default_factory=dict)  # backend -> (on, runs, reason)
    message: str = ''

    def signature(self):
        """What a shrunk case must keep failing with."""
        if self.kind == 'compile':
            return ('compile', first_line(self.message))
        if self.kind in ('wrong', 'panic'):
            bad = tuple(sorted((b, r.split(' ')[0]) for b, r in self.backends.items()
                               if r != 'ok'))
            return (self.kind, bad)
        return (self.kind,)


def first_line(message):
    for line in message.splitlines():
        line = line.strip()
        if line.startswith('error'):
            # The error's code and message; names the expansion made up vary.
            return re.sub(r'`[^`]*`', '`_`', line)
    return message.strip().splitlines()[0] if message.strip() else ''


def render_case(case_id, comp, label, flip=False):
    """The case's module: the loops' value, the comprehension's, and the check."""
    env = typed_env({'$' + d.name: d for d in comp.data})
    result, _count, _work = prepare(comp, env)
    ty = rust_type(result)
    want_data = '\n    '.join(d.declare(loop=True) for d in comp.data)
    got_data = '\n    '.join(d.declare(loop=False) for d in comp.data)
    want = comp.render_loop()
    got = comp.render_par()
    if flip:
        want = flipped(want, result)
    header = '\n'.join('//! ' + line for line in [f'case {label}'] + got.splitlines())
    return f'''{header}

#[allow(unused_imports)]
use parcomp::*;

#[allow(warnings)]
fn want() -> {ty} {{
    {want_data}
    {want}
}}

#[deny(warnings)]
fn got() -> {ty} {{
    {got_data}
    {got}
}}

pub fn run(h: &mut crate::Harness) {{
    h.check(want, got);
}}
''', got


def flipped(value, t):
    """`value` changed, so that a correct comprehension disagrees with it (the self-test)."""
    if t[0] == 'vec':
        return (f'{{ let mut w = {value}; if w.pop().is_none() {{ '
                f'w.push(::core::default::Default::default()); }} w }}')
    if t[0] == 'option':
        return (f'{{ let w = {value}; if w.is_some() {{ None }} '
                f'else {{ Some(::core::default::Default::default()) }} }}')
    if t[0] == 'int':
        return f'({value} ^ 1)'
    if t[0] == 'bool':
        return f'(!{value})'
    if t[0] == 'float':
        return f'({value} + 1.0)'
    raise ValueError(f'cannot flip a {t[0]}')


class Crate:
    """A crate of generated cases under `target/fuzz/NAME`, built in the workspace's target
    folder (the dependencies built once serve every round)."""

    def __init__(self, name, features, log):
        self.dir = os.path.join(ROOT, 'target', 'fuzz', name)
        # A package and a binary of its own: crates of one name in one target folder would
        # share (and keep) one build.
        self.package = f'parcomp-fuzz-{name}'
        self.features = features
        self.log = log
        self.texts = {}

    def write(self, cases):
        """cases: (id, module text) pairs."""
        if os.path.exists(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(os.path.join(self.dir, 'src', 'cases'))
        features = ', '.join(f'"{f}"' for f in self.features)
        with open(os.path.join(self.dir, 'Cargo.toml'), 'w') as f:
            f.write(f'''[package]
name = "{self.package}"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
parcomp = {{ path = "{ROOT}", features = [{features}] }}

[profile.dev]
debug = "line-tables-only"

[profile.dev.package."*"]
debug = false
''')
        shutil.copy(os.path.join(ROOT, 'Cargo.lock'), self.dir)
        shutil.copy(os.path.join(HERE, 'harness.rs'), os.path.join(self.dir, 'src', 'main.rs'))
        for case_id, text in cases:
            with open(os.path.join(self.dir, 'src', 'cases', f'c{case_id}.rs'), 'w') as f:
                f.write(text)
        self.ids = [case_id for case_id, _ in cases]
        self.write_index(self.ids)

    def write_index(self, ids):
        mods = ''.join(f'mod c{i};\n' for i in ids)
        table = ''.join(f'    ({i}, c{i}::run),\n' for i in ids)
        with open(os.path.join(self.dir, 'src', 'cases', 'mod.rs'), 'w') as f:
            f.write(f'{mods}\npub static CASES: &[(usize, fn(&mut crate::Harness))] = &[\n'
                    f'{table}];\n')

    def build(self):
        """Builds, setting aside the cases that do not compile: {id: rustc's messages}."""
        failed = {}
        ids = list(self.ids)
        # Its cases were written anew: no earlier build of the package may stand for it.
        deps = os.path.join(ROOT, 'target', 'debug', 'deps')
        stem = self.package.replace('-', '_')
        for f in os.listdir(deps) if os.path.isdir(deps) else []:
            if f.startswith(stem + '-'):
                os.remove(os.path.join(deps, f))
        while True:
            started = time.time()
            env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(ROOT, 'target'))
            proc = subprocess.run(
                ['cargo', 'build', '--quiet', '--message-format=json'], cwd=self.dir, env=env,
                capture_output=True, text=True)
            self.log(f'  built {len(ids)} cases in {time.time() - started:.0f} s')
            if proc.returncode == 0:
                self.ids = ids
                return failed
            errors = {}
            unattributed = []
            for line in proc.stdout.splitlines():
                try:
                    msg = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if msg.get('reason') != 'compiler-message':
                    continue
                m = msg['message']
                if m.get('level') != 'error':
                    continue
                cases = case_files(m)
                if not cases:
                    if m.get('spans'):
                        unattributed.append(m.get('rendered', ''))
                    continue
                for c in cases:
                    errors.setdefault(c, []).append(m.get('rendered', ''))
            if not errors:
                raise RuntimeError('the generated crate does not build:\n' + proc.stderr +
                                   '\n'.join(unattributed))
            for c, messages in errors.items():
                failed[c] = '\n'.join(messages)
            ids = [i for i in ids if i not in errors]
            self.write_index(ids)
            if not ids:
                self.ids = ids
                return failed

    def run(self, ids, timeout, jobs=1):
        """Runs the cases in `jobs` processes at once; {id: Outcome}. A case that crashes or
        hangs its process is marked so, and the rest of its share runs again without it."""
        started = time.time()
        shares = [ids[k::jobs] for k in range(jobs)] if jobs > 1 else [ids]
        outcomes = {}
        with concurrent.futures.ThreadPoolExecutor(len(shares)) as pool:
            for part in pool.map(lambda share: self.run_share(share, timeout), shares):
                outcomes.update(part)
        self.log(f'  ran {len(ids)} cases in {time.time() - started:.0f} s')
        return outcomes

    def run_share(self, ids, timeout):
        binary = os.path.join(ROOT, 'target', 'debug', self.package)
        outcomes = {}
        pending = list(ids)
        while pending:
            try:
                proc = subprocess.run([binary] + [str(i) for i in pending], capture_output=True,
                                      text=True, timeout=timeout)
                out, code = proc.stdout, proc.returncode
                stderr = proc.stderr
            except subprocess.TimeoutExpired as e:
                out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or '')
                code, stderr = 'timeout', ''
            current = None
            for line in out.splitlines():
                parts = line.split(' ', 3)
                if parts[0] == 'backends':
                    self.backends = line.split()[1:]
                elif parts[0] == 'start':
                    current = Outcome(int(parts[1]))
                    outcomes[current.id] = current
                elif parts[0] == 'result' and current is not None:
                    rest = parts[3] if len(parts) > 3 else ''
                    current.backends[parts[2]] = rest
                    if not rest.startswith('ok') and current.kind == 'ok':
                        current.kind = rest.split(' ')[0]
                elif parts[0] == 'device' and current is not None:
                    fields = parts[3].split(' ', 1)
                    on, runs = fields[0].split('/')
                    current.device[parts[2]] = (int(on), int(runs),
                                                fields[1] if len(fields) > 1 else '')
                elif parts[0] == 'end':
                    current = None
            if code == 2 and 'PARCOMP_REQUIRE_DEVICE' in stderr:
                raise RuntimeError(stderr.strip())
            done = set(outcomes)
            if current is not None:
                current.kind = 'hang' if code in ('timeout', 3) else 'crash'
                current.message = f'the process ended ({code}) in this case: {stderr[-2000:]}'
            elif code != 0:
                raise RuntimeError(f'the harness failed ({code}): {stderr[-4000:]}')
            pending = [i for i in pending if i not in done]
        return outcomes


def case_files(message):
    """The cases a rustc message is about: the case files its spans (or the macro expansions
    they come from) lie in."""
    found = set()

    def walk(span):
        while span:
            m = re.search(r'src/cases/c(\d+)\.rs$', span.get('file_name', ''))
            if m:
                found.add(int(m.group(1)))
            exp = span.get('expansion')
            span = exp.get('span') if exp else None

    for span in message.get('spans', []):
        walk(span)
    for child in message.get('children', []):
        for span in child.get('spans', []):
            walk(span)
    return found
