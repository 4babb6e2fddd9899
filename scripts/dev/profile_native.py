"""Where headmap's native MiniLM forward spends its time, by kind of work (issue 11).

Samples `benches/peers.rs loop N COUNT` with `perf record -e cpu-clock --call-graph dwarf` (a
timer: this kind of machine has no hardware counters), resolves every frame's address to its
chain of inlined functions with addr2line (the bench built with line tables), and gives each
sample to the innermost function of its whole call chain that names a kind of work (so an
ndarray loop called from the softmax counts as softmax). Python's standard library only.

    scripts/dev/profile_native.py [--tokens 128,512] [--count 8]

Builds the profiling copy itself: `cargo bench --bench peers` with
`CARGO_PROFILE_BENCH_DEBUG=line-tables-only` into target/profiling (same code, plus line
tables). Samples taken while the model loads are left out.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# (kind, pattern on one function of the inline chain); innermost function first, first match wins
KINDS = [
    ("matrix products: kernel", r"kernel_target|kernel_fallback"),
    ("matrix products: packing, loops", r"matrixmultiply::|ndarray::linalg"),
    ("softmax: exp", r"expf|__exp|math.rs:exp_neg|math.rs:exp_sum"),
    ("GELU: erf", r"erff|erfc|math.rs:erf"),
    ("softmax: max, sum, normalise", r"sdpa.rs:softmax_in_place|sdpa.rs:softmax_row|math.rs:(max|sum)"),
    ("mask (-inf where hidden)", r"sdpa.rs:apply_mask|mask.rs:"),
    ("scores ÷ √d_k, + bias, mask, into the run's buffer (weights_into)", r"sdpa.rs:scaled_dot_product_attention|sdpa.rs:weights_into"),
    ("finite checks (ensure_finite)", r"ensure_finite|math.rs:all_finite"),
    ("GELU: the rest of the map", r"nn.rs:Activation::apply"),
    ("layer norm", r"nn.rs:LayerNorm::forward"),
    ("bias add", r"nn.rs:Linear::forward"),
    ("weights into the run (push_layer, zeros)", r"run.rs:RowAttention::(push_layer|new)|\.push_layer\("),
    ("per-head copies: weights (H,Tq,Tk), heads_out", r"multi_head.rs:MultiHeadAttention::(forward|heads)"),
    ("attention block, inlined at its call (lines lost)", r"transformer.rs:encode\[.*self_attn\.forward"),
    ("residual adds (x + attention, x1 + ffn)", r"transformer.rs:encode"),
    ("allocation: malloc, free, memset", r"malloc|free|memset|calloc|realloc|__rdl_|__rust_(alloc|dealloc)|_int_"),
    ("copies: memcpy/memmove", r"memcpy|memmove"),
    ("embeddings", r"nn.rs:embed"),
]
# samples whose chain passes here are the model's loading, not the forward: left out
LOADING = r"from_files|peers::load|fs::read|weights.rs:|bert.rs:Bert::load|tokenize/hf.rs|serde_json|tokenizers::|drop_in_place<headmap::models::Model>"
KERNEL = "kernel: page faults of fresh memory, munmap"


def build():
    env = dict(os.environ, CARGO_TARGET_DIR=str(ROOT / "target/profiling"), CARGO_PROFILE_BENCH_DEBUG="line-tables-only")
    out = subprocess.run(
        ["cargo", "bench", "--features", "hf", "--bench", "peers", "--no-run", "--message-format=json"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    ).stdout
    for line in out.splitlines():
        m = json.loads(line)
        if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "peers" and m.get("executable"):
            return m["executable"]
    raise SystemExit("could not build benches/peers.rs")


def chains(binary, addresses):
    """address → [function, …] innermost first, from addr2line's inline chains. DWARF names an
    inlined function without its path (`forward`), so a frame in headmap's own sources is named
    by its file and the `impl`/`fn` around its line instead: `nn.rs:LayerNorm::forward`."""
    proc = subprocess.run(
        ["llvm-addr2line", "-e", binary, "-f", "-i", "-C", "-a", *[hex(a) for a in addresses]],
        capture_output=True, text=True, check=True,
    )
    result, current, lines = {}, None, proc.stdout.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("0x"):
            current = int(lines[i], 16)
            result[current] = []
            i += 1
            continue
        if not lines[i].strip():
            i += 1
            continue
        name, where = lines[i], lines[i + 1] if i + 1 < len(lines) else ""
        result[current].append(frame_name(name, where) + (f" @{where.rsplit('/', 1)[-1]}" if os.environ.get("PROFILE_DEBUG") else ""))
        i += 2
    return result


_sources = {}


def frame_name(name, where):
    """A readable name for one frame: headmap's `file:Type::fn[statement]`, or crate::name."""
    path, _, line = where.rpartition(":")
    path = path.split(":")[0] if path.count(":") else path
    src = ROOT / "src"
    if path.startswith(str(src)) and line.isdigit():
        # the statement too: code inlined at a call site keeps only the caller's line
        return f"{Path(path).name}:{enclosing(path, int(line))}[{_sources[path][int(line) - 1].strip()}]"
    for crate in ("matrixmultiply", "libm", "ndarray"):
        if f"/{crate}-" in path and not name.startswith(crate):
            return f"{crate}::{name}"
    return name


def enclosing(path, line):
    """`Type::fn` (or `fn`) of the innermost `fn` whose body holds `line` in a Rust file."""
    if path not in _sources:
        _sources[path] = Path(path).read_text().splitlines()
    impl, func = None, "?"
    for text in _sources[path][:line]:
        m = re.match(r"impl(?:<[^>]*>)?\s+(?:[\w:<>]+\s+for\s+)?(\w+)", text)
        if m:
            impl = m.group(1)
        elif re.match(r"(?:mod|#\[cfg\(test)", text.strip()):
            impl = None
        m = re.match(r"\s*(?:pub(?:\([\w]+\))?\s+)?fn\s+(\w+)", text)
        if m:
            func = f"{impl}::{m.group(1)}" if impl and text.startswith("    ") else m.group(1)
            if not text.startswith(" "):
                impl = None if not text.startswith("impl") else impl
    return func


def profile(binary, tokens, count):
    data = ROOT / f"target/profiling/perf-{tokens}.data"
    subprocess.run(
        ["perf", "record", "-q", "-e", "cpu-clock", "-F", "1000", "--call-graph", "dwarf,16384", "-o", str(data),
         "--", binary, "loop", str(tokens), str(count)],
        check=True, stdout=sys.stderr,
    )
    script = subprocess.run(
        ["perf", "script", "-i", str(data), "--no-demangle", "-F", "ip,sym,symoff,dso"],
        capture_output=True, text=True, check=True,
    ).stdout
    # one block per sample, innermost frame first. perf prints file offsets; addr2line wants
    # virtual addresses, so take the symbol's address from nm and add perf's offset into it
    symbols = {}
    for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            symbols[parts[2]] = int(parts[0], 16)
    samples, frames = [], []
    for line in script.splitlines() + [""]:
        if not line.strip():
            if frames:
                samples.append(frames)
            frames = []
            continue
        if line.rstrip().endswith("(inlined)"):
            continue  # perf's own inline names are short; addr2line gives the paths
        m = re.match(r"\s*[0-9a-f]+\s+(\S+?)(?:\+0x([0-9a-f]+))?\s+\(([^()]*)\)\s*$", line)
        if m:
            sym, off, dso = m.group(1), int(m.group(2) or "0", 16), m.group(3)
            frames.append((symbols[sym] + off if sym in symbols else None, sym, dso))
    own = lambda dso: os.path.realpath(dso) == os.path.realpath(binary)
    addresses = {a - (i > 0) for frames in samples for i, (a, _, dso) in enumerate(frames) if a is not None and own(dso)}
    resolved = chains(binary, sorted(addresses))
    kinds, functions, unmatched = collections.Counter(), collections.Counter(), collections.Counter()
    loading = 0
    for frames in samples:
        chain = []  # every function from the innermost outward, inlined ones included
        for i, (addr, sym, dso) in enumerate(frames):
            chain += resolved.get(addr - (i > 0), [demangle(sym)]) if addr is not None and own(dso) else [demangle(sym)]
        if any(re.search(LOADING, f) for f in chain):
            loading += 1
            continue
        functions[("[kernel] " if frames[0][2].startswith("[kernel") else "") + demangle(frames[0][1])] += 1
        if frames[0][2].startswith("[kernel"):
            # which of headmap's steps touched the fresh memory (or freed it)
            cause = next((k for f in chain for k, p in KINDS[2:] if re.search(p, f)), "elsewhere")
            kinds[f"{KERNEL}, under: {cause}"] += 1
            continue
        # the GEMM's kernel is a real function whose loops are inlined from matrixmultiply's files
        kernel = re.search(KINDS[0][1], demangle(frames[0][1]))
        kind = KINDS[0][0] if kernel else next(
            (k for f in chain for k, p in KINDS if re.search(p, f)), f"other ({Path(frames[0][2]).name})"
        )
        kinds[kind] += 1
        if os.environ.get("PROFILE_DEBUG", "\0") in kind:
            unmatched[" < ".join(c[:50] for c in chain[:8])] += 1
    for chain, n in unmatched.most_common(12):
        print(f"  debug {n:5d}  {chain}", file=sys.stderr)
    return sum(kinds.values()), loading, kinds, functions


_demangled = {}


def demangle(sym):
    if sym not in _demangled:
        out = subprocess.run(["c++filt", sym], capture_output=True, text=True).stdout.strip() or sym
        _demangled[sym] = re.sub(r"::h[0-9a-f]{16}$", "", out)
    return _demangled[sym]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", default="128,512")
    p.add_argument("--count", type=int, default=8)
    args = p.parse_args()
    binary = build()
    for tokens in map(int, args.tokens.split(",")):
        count = args.count * max(1, 512 // tokens // 2)
        total, loading, kinds, functions = profile(binary, tokens, count)
        print(f"\nheadmap native forward at {tokens} tokens: {total} samples of 1 ms (perf, cpu-clock, "
              f"{count} forwards; {loading} samples of loading the model left out)")
        for kind, n in kinds.most_common():
            print(f"  {100 * n / total:5.1f} %  {kind}")
        print("  top functions (self, after inlining):")
        for name, n in functions.most_common(15):
            print(f"  {100 * n / total:5.1f} %  {name[:110]}")


if __name__ == "__main__":
    main()
