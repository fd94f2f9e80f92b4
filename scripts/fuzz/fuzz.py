#!/usr/bin/env python3
"""Random comprehensions against plain loops, on every backend of the build.

Draws well-typed comprehensions over the whole documented language (generate.py), writes
each with the same computation as plain nested Rust loops (grammar.py: the expected value
never goes through the macro), builds them all as one crate and runs each on the sequential
backend, rayon (as configured and splitting eagerly) and every device present (OpenCL; CUDA
with `--features cuda`). Every disagreement, panic, or case that does not compile is
printed with its seed and its text, shrunk to a small reproducer.

    scripts/fuzz/fuzz.py --self-test          # what CI runs: seeds 1-2, 30 cases each, and a
                                              # flipped expected value must be caught
    scripts/fuzz/fuzz.py --seeds 1-40 --cases 40   # a longer run (1,600 cases)
    scripts/fuzz/fuzz.py --replay 3:17        # one case again: seed 3, case 17 (3:17,4:2 two)

Exit status 0 when every case agrees everywhere, 1 otherwise.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from crate import Crate, Outcome, render_case  # noqa: E402
from generate import Maker  # noqa: E402
from shrink import candidates, weight  # noqa: E402


def log(message):
    print(message, flush=True)


def parse_seeds(text):
    seeds = []
    for part in text.split(','):
        if '-' in part:
            a, b = part.split('-')
            seeds.extend(range(int(a), int(b) + 1))
        else:
            seeds.append(int(part))
    return seeds


def draw(seeds, per_seed):
    """(id, label, comp) for every case of the seeds."""
    cases = []
    for seed in seeds:
        for k in range(per_seed):
            label = f'{seed}:{k}'
            cases.append((len(cases), label, Maker(label).case()))
    return cases


def run_cases(cases, features, name, timeout, flip=None, jobs=2):
    """Builds and runs `cases` ((id, label, comp) triples); {id: Outcome}."""
    crate = Crate(name, features, log)
    texts = []
    for case_id, label, comp in cases:
        text, _ = render_case(case_id, comp, label, flip=(case_id == flip))
        texts.append((case_id, text))
    crate.write(texts)
    failed = crate.build()
    outcomes = {i: Outcome(i, 'compile', message=m) for i, m in failed.items()}
    if crate.ids:
        outcomes.update(crate.run(crate.ids, timeout, jobs))
    for case_id, _, _ in cases:
        outcomes.setdefault(case_id, Outcome(case_id, 'missing'))
    backends = getattr(crate, 'backends', [])
    return outcomes, backends


def shrink(comp, outcome, features, timeout, rounds):
    """The smallest case found that fails as `outcome` did, and its outcome."""
    want = outcome.signature()
    best, best_outcome = comp, outcome
    for r in range(rounds):
        pool = candidates(best)[:48]
        if not pool:
            break
        log(f'  shrinking: round {r + 1}, {len(pool)} smaller cases (weight {weight(best)})')
        cases = [(i, f'shrink {r}:{i}', c) for i, c in enumerate(pool)]
        outcomes, _ = run_cases(cases, features, 'shrink', timeout)
        found = None
        for i, _, c in cases:
            if outcomes[i].signature() == want:
                found = (c, outcomes[i])
                break
        if found is None:
            break
        best, best_outcome = found
    return best, best_outcome


def describe(comp):
    data = '\n'.join('    ' + d.declare(loop=False) for d in comp.data)
    text = comp.render_par()
    return f'{data}\n    {text}' if data else f'    {text}'


def report(label, comp, outcome, shrunk):
    log(f'\nFAILED case {label} ({outcome.kind}):')
    log(describe(comp))
    show(outcome)
    if shrunk is not None:
        small, small_outcome = shrunk
        if small is not comp:
            log('  shrunk to:')
            log(describe(small))
            show(small_outcome)


def show(outcome):
    if outcome.kind == 'compile':
        for line in outcome.message.splitlines()[:30]:
            log('    | ' + line)
        return
    if outcome.message:
        log('    ' + outcome.message[:2000])
    for backend, result in outcome.backends.items():
        if result != 'ok':
            log(f'    {backend}: {result[:1200]}')


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--seeds', default='1-2', help='seeds: 1-4, or 3,7,9 (default 1-2)')
    p.add_argument('--cases', type=int, default=30, help='cases per seed (default 30)')
    p.add_argument('--replay', help='SEED:K[,SEED:K...]: only those cases')
    p.add_argument('--features', default='opencl',
                   help='parcomp features of the build (default opencl; opencl,cuda adds CUDA)')
    p.add_argument('--no-shrink', action='store_true', help='report failures as drawn')
    p.add_argument('--rounds', type=int, default=12, help='most shrinking rounds (default 12)')
    p.add_argument('--timeout', type=int, default=4 * 3600,
                   help='seconds for one process running its share of the cases')
    p.add_argument('--self-test', action='store_true',
                   help='then flip one expected value and check that it, and only it, is caught')
    p.add_argument('--print', action='store_true', help='print the cases, build nothing')
    args = p.parse_args()
    features = [f for f in args.features.split(',') if f]
    started = time.time()

    if args.replay:
        labels = args.replay.split(',')
        cases = [(i, label, Maker(label).case()) for i, label in enumerate(labels)]
    else:
        cases = draw(parse_seeds(args.seeds), args.cases)
    if args.print:
        for case_id, label, comp in cases:
            text, _ = render_case(case_id, comp, label)
            print(f'// {label}\n{describe(comp)}\n')
        return 0

    log(f'{len(cases)} generated comprehensions, features [{", ".join(features)}]')
    outcomes, backends = run_cases(cases, features, 'cases', args.timeout)
    failures = [(i, label, comp) for i, label, comp in cases if outcomes[i].kind != 'ok']

    # Where the device backends ran each case.
    devices = [b for b in backends if b not in ('seq', 'rayon', 'rayon-eager')]
    for d in devices:
        ran = [o for o in outcomes.values() if d in o.device]
        whole = sum(1 for o in ran if o.device[d][0] == o.device[d][1] and o.device[d][1] > 0)
        some = sum(1 for o in ran if 0 < o.device[d][0] < o.device[d][1])
        none = len(ran) - whole - some
        log(f'{d}: {whole} of {len(ran)} cases ran wholly on the device, {some} in part, '
            f'{none} on the host (allowed, with a reason)')
        reasons = {}
        for o in ran:
            if o.device[d][0] < o.device[d][1]:
                why = o.device[d][2][:100]
                reasons[why] = reasons.get(why, 0) + 1
        for why, n in sorted(reasons.items(), key=lambda x: -x[1])[:8]:
            log(f'    {n:4} {why}')

    for i, label, comp in failures:
        shrunk = None
        if not args.no_shrink:
            shrunk = shrink(comp, outcomes[i], features, args.timeout, args.rounds)
        report(label, comp, outcomes[i], shrunk)
    log(f'\n{len(cases)} cases on {", ".join(backends)}: {len(cases) - len(failures)} agree '
        f'everywhere, {len(failures)} fail ({time.time() - started:.0f} s)')
    tested = self_test(cases, outcomes, features, args.timeout) if args.self_test else True
    return 1 if failures or not tested else 0


def self_test(cases, outcomes, features, timeout):
    """Flips the expected value of one case that agreed everywhere and runs it again beside a
    few others that agreed: the check must report it, on every backend, and nothing else."""
    good = [(i, label, comp) for i, label, comp in cases if outcomes[i].kind == 'ok']
    if len(good) < 2:
        log('self-test: too few cases agree to flip one')
        return False
    picked = good[:: max(1, len(good) // 5)][:5]
    flip = picked[len(picked) // 2][0]
    flipped, backends = run_cases(picked, features, 'self-test', timeout, flip=flip)
    caught = flipped[flip]
    others = [i for i, _, _ in picked if i != flip and flipped[i].kind != 'ok']
    label = next(label for i, label, _ in picked if i == flip)
    wrong = sorted(b for b, r in caught.backends.items() if r.startswith('wrong'))
    log(f'self-test: the expected value of case {label} flipped: reported wrong on {wrong}')
    if sorted(backends) != wrong or others:
        log('self-test FAILED: a flipped expected value was not caught on every backend alone')
        return False
    log('self-test passed: the flipped value was caught on every backend, and nothing else')
    return True


if __name__ == '__main__':
    sys.exit(main())
