#!/usr/bin/env python3
"""Validates lib/Target/TileTables.json and embeds it as a C char array.

Runs at build time so that a bad edit of the table (a duplicated key, a
misspelled or missing field, a dangling reference) fails the build with a
message naming the entry, instead of surfacing as a wrong kernel choice.
The C++ loader (TileTableParser.cpp) checks the same schema again for tables
given on the command line.

Usage: embed_tile_tables.py <TileTables.json> <output.inc>
"""

import json
import sys

INT, STR, BOOL, STRS, INTS = "int", "string", "bool", "string list", "int list"

# field -> (type, required)
TOP = {
    "schema": (STR, True), "version": (INT, True), "reason": (STR, True),
    "profiles": ("profiles", True), "candidate_sets": ("csets", True),
    "instruction_sets": ("isets", True), "chips": ("chips", True),
}
PROFILE = {"reason": (STR, True), "directions": (STRS, True),
           "dtypes": (STRS, True)}
CANDIDATE = {
    "name": (STR, True), "reason": (STR, True), "block_m": (INT, True),
    "block_n": (INT, True), "warps": (INT, True), "stages": (INT, True),
    "pipeline": (STR, True), "acc_in_registers": (BOOL, True),
    "mma": (STR, True), "dtypes": (STRS, True), "head_dim_max": (INT, True),
    "aligned_variant": (BOOL, False), "implemented": (BOOL, False),
    "supports_bias": (BOOL, False), "direction": (STR, False),
    "only_on": (STRS, False), "masks": (STRS, False),
    "priority": (INT, False),
}
MASKS = ("none", "causal", "causal_bottom_right", "sliding_window")
INSTR = {
    "name": (STR, True), "reason": (STR, True), "m": (INT, True),
    "n": (INT, True), "k": (INT, True), "operand_types": (STRS, True),
    "acc_type": (STR, True), "rows_per_warp": (INT, True),
    "max_rows_per_warp": (INT, False),
    "block_n_multiple": (INT, True), "block_n_max": (INT, False), "block_n_allowed": (INTS, False),
    "head_dim_multiple": (INT, True), "head_dim_max": (INT, True),
    "min_mma_per_iteration": (INT, False), "shared_operands": (BOOL, False),
}
CHIP = {
    "name": (STR, True), "vendor": (STR, True), "reason": (STR, True),
    "warp_size": (INT, True), "max_threads_per_block": (INT, True),
    "smem_default_bytes": (INT, True), "smem_max_bytes": (INT, True),
    "smem_row_pad_elems": (INT, True), "regs_per_thread_max": (INT, True),
    "regs_per_block_max": (INT, True), "regs_overhead": (INT, True),
    "features": (STRS, True), "dtypes": (STRS, True),
    "dtype_note": (STR, False), "head_dim_max": (INT, True),
    "instruction_sets": (STRS, True), "candidate_sets": (STRS, True),
}
DTYPES = {"f16", "bf16", "f32"}
PIPELINES = {"simple", "cp_async", "tma_ws", "lds_double"}
VENDORS = {"nvidia", "amd", "host"}
DIRECTIONS = {"forward", "backward"}

errors = []


def err(where, msg):
    errors.append(f"{where}: {msg}")


def no_duplicates(pairs):
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"duplicate key '{key}'")
        seen.add(key)
    return dict(pairs)


def check_type(where, value, kind):
    ok = {
        INT: lambda v: isinstance(v, int) and not isinstance(v, bool),
        STR: lambda v: isinstance(v, str),
        BOOL: lambda v: isinstance(v, bool),
        STRS: lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
        INTS: lambda v: isinstance(v, list) and all(
            isinstance(x, int) and not isinstance(x, bool) for x in v),
    }.get(kind, lambda v: True)(value)
    if not ok:
        err(where, f"expected {kind}")
    return ok


def check_fields(where, obj, spec):
    if not isinstance(obj, dict):
        err(where, "expected an object")
        return False
    for key in obj:
        if key not in spec:
            err(where, f"unknown field '{key}' (known: {', '.join(spec)})")
    for key, (kind, required) in spec.items():
        if key not in obj:
            if required:
                err(where, f"missing field '{key}'")
            continue
        check_type(f"{where}.{key}", obj[key], kind)
    return True


def check_dtypes(where, values):
    for v in values if isinstance(values, list) else []:
        if v not in DTYPES:
            err(where, f"unknown element type '{v}' (known: f16, bf16, f32)")


def validate(table):
    if not check_fields("table", table, TOP):
        return
    if table.get("schema") != "attn-tile-tables" or table.get("version") != 1:
        err("table", "expected schema 'attn-tile-tables' version 1")
    for name, prof in table.get("profiles", {}).items():
        where = f"profiles.{name}"
        check_fields(where, prof, PROFILE)
        check_dtypes(where, prof.get("dtypes"))
        for d in prof.get("directions", []):
            if d not in DIRECTIONS:
                err(where, f"unknown direction '{d}'")
    isets = table.get("instruction_sets", {})
    for sname, instrs in isets.items():
        for i, ins in enumerate(instrs):
            where = f"instruction_sets.{sname}[{i}]"
            check_fields(where, ins, INSTR)
            check_dtypes(where, ins.get("operand_types"))
    csets = table.get("candidate_sets", {})
    for sname, cands in csets.items():
        for i, cand in enumerate(cands):
            where = f"candidate_sets.{sname}[{i}] ({cand.get('name', '?')})"
            check_fields(where, cand, CANDIDATE)
            check_dtypes(where, cand.get("dtypes"))
            if cand.get("pipeline") not in PIPELINES:
                err(where, f"unknown pipeline '{cand.get('pipeline')}'")
            if cand.get("direction", "forward") not in DIRECTIONS:
                err(where, f"unknown direction '{cand.get('direction')}'")
            for f in ("block_m", "block_n", "warps", "stages", "head_dim_max"):
                if isinstance(cand.get(f), int) and cand[f] <= 0:
                    err(where, f"'{f}' must be positive")
    chip_names = {c.get("name") for c in table.get("chips", [])}
    seen = set()
    for i, chip in enumerate(table.get("chips", [])):
        where = f"chips[{i}] ({chip.get('name', '?')})"
        check_fields(where, chip, CHIP)
        if chip.get("name") in seen:
            err(where, "duplicate chip name")
        seen.add(chip.get("name"))
        if chip.get("vendor") not in VENDORS:
            err(where, f"unknown vendor '{chip.get('vendor')}'")
        check_dtypes(where, chip.get("dtypes"))
        instr_names = set()
        for s in chip.get("instruction_sets", []):
            if s not in isets:
                err(where, f"unknown instruction set '{s}'")
                continue
            instr_names |= {ins.get("name") for ins in isets[s]}
        cand_names = set()
        for s in chip.get("candidate_sets", []):
            if s not in csets:
                err(where, f"unknown candidate set '{s}'")
                continue
            for cand in csets[s]:
                name = cand.get("name")
                if name in cand_names:
                    err(where, f"duplicate candidate name '{name}'")
                cand_names.add(name)
                if cand.get("mma") not in instr_names:
                    err(where, f"candidate '{name}' uses matrix instruction "
                        f"'{cand.get('mma')}' that the chip does not list")
                for c in cand.get("only_on", []):
                    if c not in chip_names:
                        err(where, f"candidate '{name}': only_on names "
                            f"unknown chip '{c}'")
                for m in cand.get("masks", []):
                    if m not in MASKS:
                        err(where, f"candidate '{name}': masks names "
                            f"unknown mask '{m}'")


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, "rb") as f:
        data = f.read()
    try:
        table = json.loads(data.decode("utf-8"), object_pairs_hook=no_duplicates)
    except ValueError as e:
        print(f"{src}: error: {e}", file=sys.stderr)
        return 1
    validate(table)
    if errors:
        for e in errors:
            print(f"{src}: error: {e}", file=sys.stderr)
        return 1
    # A char array rather than a string literal: compilers cap string
    # literals (MSVC at 64 KiB) but not array initializers.
    lines = ["// Generated by embed_tile_tables.py from TileTables.json. "
             "Do not edit."]
    for i in range(0, len(data), 16):
        lines.append(",".join(str(b) for b in data[i:i + 16]) + ",")
    lines.append("0")
    with open(dst, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
