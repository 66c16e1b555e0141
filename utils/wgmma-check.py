#!/usr/bin/env python3
"""Checks that no instruction touches an in-flight wgmma accumulator.

Usage: wgmma-check.py KERNEL.ptx

An inline-asm block that commits wgmma.mma_async instructions without
waiting for them (the attention kernel's O += P V) leaves its accumulator
registers being written by the tensor cores until a later
wgmma.wait_group. Reading or writing one of them before that is undefined
behaviour, and ptxas does not diagnose it. A register copy that the
compiler puts on a loop's back edge would do exactly that, so this walks
every control-flow path from each such block to the wait that completes it
and reports any instruction that names one of its accumulators. Groups
complete in commit order: `wgmma.wait_group N` completes a chain once N
groups were committed after it on the path.

Prints one line per kernel ("<entry>: N async wgmma chains, no hazard") or
one line per hazard, and exits 1 if any hazard (or no kernel) was found.
"""
import re
import sys

REG = re.compile(r"%[a-z]+\d+\b")
LABEL = re.compile(r"^\s*(\$?[\w$]+):\s*$")
BRANCH = re.compile(r"^\s*(@!?%p\d+\s+)?bra(\.uni)?\s+(\$?[\w$]+);")


def functions(lines):
    """(entry name, [(line number, text)]) per .entry body."""
    name, body, depth, in_asm = None, [], 0, False
    for no, line in enumerate(lines, 1):
        # Inline asm brings its own braces.
        if "// begin inline asm" in line:
            in_asm = True
        elif "// end inline asm" in line:
            in_asm = False
        if in_asm and name is not None:
            body.append((no, line))
            continue
        m = re.match(r"^\.visible \.entry (\w+)\(", line) or \
            re.match(r"^\.entry (\w+)\(", line)
        if m:
            name, body, depth = m.group(1), [], 0
            continue
        if name is None:
            continue
        if line.strip() == "{" and depth == 0:
            depth = 1
            continue
        if depth == 1 and line.strip() == "}":
            yield name, body
            name = None
            continue
        if depth:
            body.append((no, line))


def instructions(body):
    """Groups a body into units: one per inline-asm block, label or line."""
    units, i = [], 0
    while i < len(body):
        no, text = body[i]
        if "// begin inline asm" in text:
            j = i + 1
            block = []
            while j < len(body) and "// end inline asm" not in body[j][1]:
                block.append(body[j][1])
                j += 1
            units.append(("asm", no, "\n".join(block)))
            i = j + 1
            continue
        stripped = text.split("//")[0].strip()
        if stripped:
            m = LABEL.match(stripped)
            units.append(("label", no, m.group(1)) if m else ("insn", no,
                                                               stripped))
        i += 1
    return units


def successors(units, k, labels):
    kind, _, text = units[k]
    nxt = [k + 1] if k + 1 < len(units) else []
    if kind != "insn":
        return nxt
    m = BRANCH.match(text)
    if m:
        target = [labels[m.group(3)]] if m.group(3) in labels else []
        return target if not m.group(1) else target + nxt
    if re.match(r"^(ret|exit|trap);", text):
        return []
    return nxt


WAIT_OR_COMMIT = re.compile(
    r"wgmma\.commit_group|wgmma\.wait_group\.sync\.aligned\s+(\d+)")
# Commits counted after a chain stop here: the kernels' waits leave at most
# one group pending, so larger counts would only multiply the walk's states.
MAX_PENDING = 8


def scan_asm(text, after):
    """Walks one asm block with `after` groups committed since the chain:
    (whether a wait in it completes the chain, the text before that wait,
    the commits since the chain at its end)."""
    for m in WAIT_OR_COMMIT.finditer(text):
        if m.group(1) is None:
            after = min(after + 1, MAX_PENDING)
        elif after >= int(m.group(1)):
            return True, text[:m.start()], after
    return False, text, after


def check(name, body):
    units = instructions(body)
    labels = {u[2]: k for k, u in enumerate(units) if u[0] == "label"}
    chains, hazards = 0, []
    for k, (kind, no, text) in enumerate(units):
        if kind != "asm" or "wgmma.mma_async" not in text:
            continue
        if "wgmma.commit_group" not in text:
            continue
        # From the chain's own commit: a wait of its own completes it.
        done, _, after = scan_asm(text[text.rindex("wgmma.commit_group"):], -1)
        if done:
            continue
        chains += 1
        accs = set()
        for d in re.findall(r"wgmma\.mma_async[^{]*\{([^}]*)\}", text):
            accs |= set(REG.findall(d))
        seen = set()
        work = [(j, after) for j in successors(units, k, labels)]
        while work:
            j, n = work.pop()
            if (j, n) in seen:
                continue
            seen.add((j, n))
            jkind, jno, jtext = units[j]
            if jkind == "asm" and "wgmma." in jtext:
                done, before, n = scan_asm(jtext, n)
                # A statement that waits first and then uses the registers
                # (the epilogue's wait) is fine; one that uses them before
                # the wait that completes them is not.
                used = accs & set(REG.findall(before))
                if used:
                    hazards.append((jno, no, sorted(used)))
                if done:
                    continue
            elif jkind != "label":
                used = accs & set(REG.findall(jtext))
                if used:
                    hazards.append((jno, no, sorted(used)))
            work.extend((s, n) for s in successors(units, j, labels))
    return chains, hazards


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        lines = f.read().splitlines()
    found, bad = 0, 0
    for name, body in functions(lines):
        found += 1
        chains, hazards = check(name, body)
        for line, chain, regs in hazards:
            bad += 1
            print(f"{name}: line {line} touches {', '.join(regs)} of the "
                  f"async wgmma chain at line {chain} before a wait")
        if not hazards:
            print(f"{name}: {chains} async wgmma chains, no hazard")
    if not found:
        print("wgmma-check: no .entry in the input", file=sys.stderr)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
