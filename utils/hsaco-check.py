#!/usr/bin/env python3
"""Static checks of AMD code objects (hsaco), for CI without an AMD GPU.

Reads code objects from one of:
  * an MLIR file holding `gpu.binary` ops made by `attn-to-rocdl{format=bin}`,
  * .hsaco files,
  * a bundle directory (bundle.json + hsaco files, docs/BundleFormat.md),
and, from the AMDGPU metadata note of each (as `llvm-readelf --notes` prints
it), checks every kernel against the chip's limits in lib/Target/TileTables.json
(LDS bytes, VGPR/AGPR/SGPR counts, wave size), that nothing spills, and, with
--abi or a bundle, that the kernel arguments are those of the ABI. --isa also
counts the matrix instructions of the disassembly.

Prints one line per kernel (stable, for FileCheck) and exits 1 on a violation.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

# Limits that the tile tables do not carry because they follow from the ISA
# generation, not from a tiling choice (AMD ISA guides; LLVM AMDGPUUsage):
# the SGPRs of a wavefront and the architectural VGPR file of a lane.
# .sgpr_count counts the addressable SGPRs used (s0-s101 on gfx9, s0-s105 on
# gfx10+) plus the special ones after them: VCC, and on gfx9 FLAT_SCRATCH
# and XNACK_MASK. llc for gfx942 reports 108 for a kernel that uses s101 and
# refuses s102 ("addressable scalar registers (103) exceeds limit (102)"),
# for gfx1100 108 with s105 used.
SGPR_MAX = {"gfx9": 102 + 6, "gfx11": 106 + 2, "gfx12": 106 + 2}
ARCH_VGPR_MAX = 256
AGPR_MAX = 256

# attn-fwd-v1 (docs/BundleFormat.md): argument kinds in order. Variants of a
# serving layout (varlen, kvcache, paged) append nine, those for head dims
# given at run time (max_head_dim) two.
_FWD_V1 = ["ptr"] * 6 + ["i32"] * 5 + ["i64"] * 18 + ["f32"] * 2 + ["i32"] * 2
ABI_ARGS = {
    "attn-fwd-v1": _FWD_V1,
    "attn-fwd-v1-serving": _FWD_V1 + ["ptr"] * 4 + ["i64"] + ["i32"] * 2 +
    ["ptr", "i32"],
    "attn-fwd-v1-any-head-dim": _FWD_V1 + ["i32"] * 2,
}
KIND_SIZE = {"ptr": 8, "i32": 4, "i64": 8, "f32": 4}


def abi_layout(abi):
    """(offset, size, value_kind) of each argument, naturally aligned."""
    layout, offset = [], 0
    for kind in ABI_ARGS[abi]:
        size = KIND_SIZE[kind]
        offset = (offset + size - 1) // size * size
        layout.append((offset, size,
                       "global_buffer" if kind == "ptr" else "by_value"))
        offset += size
    return layout


def parse_yaml_subset(text):
    """Parses the block-style YAML subset of AMDGPU metadata (maps, lists of
    maps and of scalars, scalar values) without needing PyYAML."""
    lines = [l for l in text.splitlines()
             if l.strip() and l.strip() not in ("---", "...")]
    pos = 0

    def scalar(v):
        v = v.strip()
        if re.fullmatch(r"-?\d+", v):
            return int(v)
        return v.strip("'\"")

    def block(indent):
        nonlocal pos
        first = lines[pos]
        is_list = first.lstrip().startswith("- ")
        result = [] if is_list else {}
        while pos < len(lines):
            line = lines[pos]
            cur = len(line) - len(line.lstrip())
            if cur < indent:
                break
            body = line.strip()
            if is_list:
                if not body.startswith("- "):
                    break
                rest = body[2:]
                if ":" in rest and not rest.startswith("'"):
                    # A map item: re-read it as a map one level deeper.
                    lines[pos] = " " * (cur + 2) + rest
                    result.append(block(cur + 2))
                else:
                    result.append(scalar(rest))
                    pos += 1
            else:
                key, _, value = body.partition(":")
                pos += 1
                if value.strip():
                    result[key] = scalar(value)
                elif pos < len(lines):
                    nxt = lines[pos]
                    result[key] = block(len(nxt) - len(nxt.lstrip()))
        return result

    return block(0) if lines else {}


def decode_mlir_string(raw):
    out, i = bytearray(), 0
    while i < len(raw):
        c = raw[i]
        if c != "\\":
            out += c.encode("latin-1")
            i += 1
        elif raw[i + 1] in '\\"':
            out.append(ord(raw[i + 1]))
            i += 2
        elif raw[i + 1] in "nt":
            out.append(10 if raw[i + 1] == "n" else 9)
            i += 2
        else:
            out.append(int(raw[i + 1:i + 3], 16))
            i += 3
    return bytes(out)


def read_text(path):
    if path == "-":
        return sys.stdin.buffer.read().decode("latin-1")
    return open(path, encoding="latin-1").read()


def variants_from_mlir(text):
    """The bundle metadata convert-attn-to-rocdl records in `attn.kernels`,
    by kernel name (what attn-write-bundle would put in bundle.json)."""
    variants = {}
    for d in re.findall(r"\{[^{}]*dynamic_smem[^{}]*\}", text):
        fields = {k: a or b for k, a, b in
                  re.findall(r'(\w+) = (?:"([^"]*)"|(\d+))', d)}
        if "entry" in fields:
            variants[fields["entry"]] = {
                "name": fields.get("name"), "entry": fields["entry"],
                "dynamic_smem": int(fields.get("dynamic_smem", 0)),
                "threads": int(fields.get("threads", 0))}
    return variants


def objects_from_mlir(text, tmpdir):
    """Yields (chip, hsaco path) for each binary object of the text."""
    pattern = re.compile(
        r'#gpu\.object<#rocdl\.target<[^>]*chip = "(\w+)"[^>]*>[^"]*'
        r'bin = "((?:[^"\\]|\\.)*)"')
    for n, m in enumerate(pattern.finditer(text)):
        out = os.path.join(tmpdir, "object%d.hsaco" % n)
        with open(out, "wb") as f:
            f.write(decode_mlir_string(m.group(2)))
        yield m.group(1), out


def read_metadata(readelf, hsaco):
    notes = subprocess.run([readelf, "--notes", hsaco], check=True,
                           capture_output=True, text=True).stdout
    start = notes.find("amdhsa.kernels:")
    end = notes.find("...", start)
    if start < 0:
        raise SystemExit("error: %s has no AMDGPU metadata note" % hsaco)
    return parse_yaml_subset(notes[start:end])


def matrix_instructions(objdump, chip, hsaco):
    asm = subprocess.run([objdump, "-d", "--mcpu=" + chip, hsaco], check=True,
                         capture_output=True, text=True).stdout
    return collections.Counter(re.findall(r"\b(v_(?:mfma|wmma)\w*)", asm))


def chip_table(tables, chip):
    for entry in tables["chips"]:
        if entry["name"] == chip:
            return entry
    raise SystemExit("error: chip '%s' is not in the tile tables" % chip)


def check_kernel(kernel, chip, limits, abi, errors):
    """Appends a message to `errors` for each violated limit."""
    name = kernel.get(".name", "?")

    def need(cond, what):
        if not cond:
            errors.append("%s: %s" % (name, what))

    generation = "gfx9" if chip.startswith("gfx9") else chip[:5]
    vgpr, agpr = kernel.get(".vgpr_count", 0), kernel.get(".agpr_count", 0)
    sgpr, lds = kernel.get(".sgpr_count", 0), kernel.get(
        ".group_segment_fixed_size", 0)
    need(kernel.get(".wavefront_size") == limits["warp_size"],
         "wavefront_size %s, expected %d" %
         (kernel.get(".wavefront_size"), limits["warp_size"]))
    # On gfx90a+ .vgpr_count is the unified file (arch VGPRs, then AGPRs).
    need(vgpr <= limits["regs_per_thread_max"],
         "vgpr_count %d exceeds %d" % (vgpr, limits["regs_per_thread_max"]))
    need(agpr <= AGPR_MAX, "agpr_count %d exceeds %d" % (agpr, AGPR_MAX))
    need(vgpr - agpr <= ARCH_VGPR_MAX or generation != "gfx9",
         "architectural VGPRs %d exceed %d" % (vgpr - agpr, ARCH_VGPR_MAX))
    need(sgpr <= SGPR_MAX[generation],
         "sgpr_count %d exceeds %d" % (sgpr, SGPR_MAX[generation]))
    need(lds <= limits["smem_max_bytes"],
         "group_segment_fixed_size %d exceeds the LDS limit %d" %
         (lds, limits["smem_max_bytes"]))
    for key in (".vgpr_spill_count", ".sgpr_spill_count",
                ".private_segment_fixed_size"):
        need(kernel.get(key, 0) == 0,
             "%s is %s, expected 0" % (key[1:], kernel.get(key)))
    if abi:
        args = [a for a in kernel.get(".args", [])
                if not str(a.get(".value_kind", "")).startswith("hidden_")]
        expected = abi_layout(abi)
        need(len(args) == len(expected),
             "%d arguments, %s has %d" % (len(args), abi, len(expected)))
        for i, (arg, exp) in enumerate(zip(args, expected)):
            got = (arg.get(".offset"), arg.get(".size"),
                   arg.get(".value_kind"))
            need(got == exp, "argument %d is (offset, size, kind) %s, %s "
                 "expects %s" % (i, got, abi, exp))
    return ("%s: chip=%s wave=%s vgpr=%d agpr=%d sgpr=%d lds=%d spills=%d/%d "
            "scratch=%d" % (name, chip, kernel.get(".wavefront_size"), vgpr,
                            agpr, sgpr, lds, kernel.get(".vgpr_spill_count", 0),
                            kernel.get(".sgpr_spill_count", 0),
                            kernel.get(".private_segment_fixed_size", 0)))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", help="MLIR file, .hsaco file or bundle dir")
    parser.add_argument("--chip", help="chip of .hsaco inputs")
    parser.add_argument("--abi", choices=sorted(ABI_ARGS),
                        help="check kernel arguments against this ABI")
    parser.add_argument("--isa", action="store_true",
                        help="count MFMA/WMMA instructions")
    parser.add_argument("--tables", default=os.path.join(
        here, "..", "lib", "Target", "TileTables.json"))
    parser.add_argument("--tools", default="/usr/lib/llvm-22/bin",
                        help="directory of llvm-readelf and llvm-objdump")
    args = parser.parse_args()
    tables = json.load(open(args.tables))
    readelf = os.path.join(args.tools, "llvm-readelf")
    objdump = os.path.join(args.tools, "llvm-objdump")

    with tempfile.TemporaryDirectory() as tmpdir:
        # (chip, hsaco, abi, expected kernel names or None)
        objects = []
        if os.path.isdir(args.input):
            bundle = json.load(open(os.path.join(args.input, "bundle.json")))
            for v in bundle["variants"]:
                abi = bundle["abi"]
                if v.get("layout", "dense") != "dense":
                    abi += "-serving"
                elif v.get("max_head_dim"):
                    abi += "-any-head-dim"
                # A bundle of several chips (version 5) says each one's.
                objects.append((v.get("chip", bundle["chip"]),
                                os.path.join(args.input, v["binary"]),
                                abi, v))
        elif args.input.endswith(".hsaco"):
            if not args.chip:
                raise SystemExit("error: --chip is required for .hsaco input")
            objects.append((args.chip, args.input, args.abi, None))
        else:
            text = read_text(args.input)
            variants = variants_from_mlir(text)
            for chip, path in objects_from_mlir(text, tmpdir):
                objects.append((chip, path, args.abi, variants))
        if not objects:
            raise SystemExit("error: no ROCDL code object in %s" % args.input)

        errors = []
        for chip, hsaco, abi, variant in objects:
            limits = chip_table(tables, chip)
            kernels = read_metadata(readelf, hsaco).get("amdhsa.kernels", [])
            if isinstance(variant, dict) and "entry" not in variant:
                # MLIR input: the metadata of whichever kernel this holds.
                found = [variant[k[".name"]] for k in kernels
                         if k.get(".name") in variant]
                variant = found[0] if found else None
            if variant is not None:
                names = [k.get(".name") for k in kernels]
                if variant["entry"] not in names:
                    errors.append("%s: entry %s not in %s" %
                                  (variant["name"], variant["entry"], names))
            for kernel in kernels:
                line = check_kernel(kernel, chip, limits, abi, errors)
                if variant is not None and kernel.get(".name") == \
                        variant["entry"]:
                    line += " dynamic_lds=%d" % variant["dynamic_smem"]
                print(line)
                if variant is not None and kernel.get(".name") == \
                        variant["entry"]:
                    lds = kernel.get(".group_segment_fixed_size", 0)
                    if lds + variant["dynamic_smem"] > limits["smem_max_bytes"]:
                        errors.append("%s: static + dynamic LDS %d exceeds %d"
                                      % (variant["name"],
                                         lds + variant["dynamic_smem"],
                                         limits["smem_max_bytes"]))
                    if kernel.get(".max_flat_workgroup_size",
                                  0) < variant["threads"]:
                        errors.append("%s: max_flat_workgroup_size %s < "
                                      "threads %d" % (variant["name"],
                                      kernel.get(".max_flat_workgroup_size"),
                                      variant["threads"]))
            if args.isa:
                for mnemonic, count in sorted(
                        matrix_instructions(objdump, chip, hsaco).items()):
                    print("  isa: %s x%d" % (mnemonic, count))
            if abi:
                print("  args: %s ok" % abi if not errors else "  args: checked")
        for e in errors:
            print("error: " + e)
        print("hsaco-check: %d object(s), %s" %
              (len(objects), "FAILED" if errors else "all within limits"))
        return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
