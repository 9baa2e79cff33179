#!/usr/bin/env python3
"""A lab compiles against the lab API alone (api/README.md; grader/harness/meson.build).

Usage: test_lab_api.py BUILD_DIR LAB_NAME

Takes the two commands ninja runs on LAB_NAME's kernel.cu (the harness's compile,
grader/harness/harness-LAB_NAME, and the PTX the evidence reads, grader/harness/LAB_NAME.ptx),
exactly as `ninja -t commands` prints them, and runs each on small kernels of ours with the
compile step turned into a preprocess (-E: the includes are all this test is about, and it is
fast). Checks:
  * a kernel that includes every header of api/ by the name a lab uses preprocesses;
  * a kernel that includes a kit header, by its own path ("grader/judge/judge.h"), by the name every
    kit header had before the API had a folder ("labkit/judge.h", "labkit/session.h") or from
    reference/ ("reference/baseline.h"), fails, and the error names the header, says it is not
    part of the lab API and points at api/README.md;
  * the folders of grader/harness (harness.h, lab_api.h sit there) are not on the lab's path:
    "harness.h" and "lab_api.h" are not found.
Each failure names the command, the include and what the compiler said.
"""
import os
import shlex
import subprocess
import sys
import tempfile

API_HEADERS_MIN = ['labkit/conv.h', 'labkit/conv_buffers.h', 'labkit/conv_limits.h', 'labkit/cuda_check.h',
                   'labkit/map.h', 'labkit/guard_regions.h', 'gpu-new-forward.h', 'reference/map_workload.h']
KIT_HEADERS = ['labkit/judge.h', 'labkit/session.h', 'labkit/sandbox.h', 'grader/judge/judge.h',
               'grader/core/random.h', 'grader/protocol/wire.h', 'reference/baseline.h']
NOT_ON_PATH = ['harness.h', 'lab_api.h']

failures = []


def fail(msg):
    failures.append(msg)
    print('FAIL ' + msg)


def kernel_command(build_dir, target, kernel_suffix):
    """The line of `ninja -t commands TARGET` whose last input is the lab's kernel.cu, as argv."""
    out = subprocess.run(['ninja', '-C', build_dir, '-t', 'commands', target], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        words = shlex.split(line)
        srcs = [w for w in words if w.endswith(kernel_suffix)]
        if words and 'nvcc' in os.path.basename(words[0]) and srcs:
            return words, srcs[-1]
    sys.exit(f'test_lab_api: no nvcc command for {kernel_suffix} in `ninja -t commands {target}` '
             f'(build dir {build_dir})')


def as_preprocess(words, kernel, source, output):
    """The command with the kernel replaced by SOURCE, its -c/-ptx step by -E, the output by OUTPUT
    and the depfile flags dropped (they would write beside the build's own)."""
    argv = []
    skip = 0
    for i, w in enumerate(words):
        if skip:
            skip -= 1
            continue
        if w in ('-MD', '-MMD'):
            continue
        if w in ('-MF', '-MQ', '-MT'):
            skip = 1
            continue
        if w in ('-c', '-ptx'):
            argv.append('-E')
            continue
        if w == '-o':
            argv += ['-o', output]
            skip = 1
            continue
        argv.append(source if w == kernel else w)
    return argv


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    build_dir, lab = sys.argv[1], sys.argv[2]
    source_root = os.environ.get('LABKIT_SOURCE_DIR') or os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))))
    api_dir = os.path.join(source_root, 'api')
    api_headers = sorted(os.path.relpath(os.path.join(d, f), api_dir) for d, _, fs in os.walk(api_dir)
                         for f in fs if f.endswith('.h'))
    for h in API_HEADERS_MIN:
        if h not in api_headers:
            fail(f'api/{h} is missing: labs include it (labs/*/kernel.cu, tests/labs)')
    commands = {
        'harness compile': kernel_command(build_dir, f'grader/harness/harness-{lab}', 'kernel.cu'),
        'PTX compile': kernel_command(build_dir, f'grader/harness/{lab}.ptx', 'kernel.cu'),
    }
    with tempfile.TemporaryDirectory() as tmp:
        def run(name, includes):
            src = os.path.join(tmp, name + '.cu')
            with open(src, 'w') as f:
                f.writelines(f'#include "{h}"\n' for h in includes)
                f.write('__global__ void lab_api_probe() {}\n')
            results = {}
            for what, (words, kernel) in commands.items():
                argv = as_preprocess(words, kernel, src, os.path.join(tmp, name + '.i'))
                p = subprocess.run(argv, cwd=build_dir, capture_output=True, text=True)
                results[what] = (p.returncode, p.stdout + p.stderr, ' '.join(argv))
            return results

        for what, (rc, out, cmd) in run('all_api', api_headers).items():
            if rc != 0:
                fail(f'{what}: a kernel including every api/ header ({", ".join(api_headers)}) did not '
                     f'preprocess (exit {rc}): {cmd}\n{out}')
            else:
                print(f'ok   {what}: every api/ header ({len(api_headers)}) is reachable')
        for i, h in enumerate(KIT_HEADERS):
            for what, (rc, out, cmd) in run(f'kit_{i}', [h]).items():
                want = [f'{h} is the kit\'s own, not part of the lab API', 'api/README.md']
                if rc == 0:
                    fail(f'{what}: a kernel including "{h}" preprocessed: the lab sees the kit\'s headers: {cmd}')
                elif not all(w in out for w in want):
                    fail(f'{what}: including "{h}" failed without naming the lab API (expected {want!r}): {cmd}\n{out}')
                else:
                    print(f'ok   {what}: "{h}" is refused, naming the lab API')
        for i, h in enumerate(NOT_ON_PATH):
            for what, (rc, out, cmd) in run(f'harness_{i}', [h]).items():
                if rc == 0:
                    fail(f'{what}: a kernel including "{h}" preprocessed: grader/harness is on the lab\'s path: {cmd}')
                else:
                    print(f'ok   {what}: "{h}" is not on the lab\'s path')
    if failures:
        print(f'{len(failures)} check(s) failed')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
