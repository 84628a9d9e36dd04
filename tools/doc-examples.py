#!/usr/bin/env python3
"""Keeps the worked examples of a doc (``` blocks of `$ perfgap ...` lines and their output)
what the binary prints today.

  tools/doc-examples.py BINARY DOC --write   rewrite each example's output in place
  tools/doc-examples.py BINARY DOC --check   exit 1 with a diff where one is stale

An example runs where every path it names exists: ../shared/fixtures (real captures),
tests/fixtures/logs, then tests/fixtures (generated ones). One naming no file there (a file of
the reader's own, such as rec.data) is left as written and counted. Without ../shared the
examples over real captures are skipped, not failed. The docs show what a user sees at a
terminal, so the text output is compared whole (no -v unless the example asks for it).
"""
import difflib
import os
import subprocess
import sys

BASES = ["../shared/fixtures", "tests/fixtures/logs", "tests/fixtures"]


def base_for(args, repo):
    paths = [a for a in args if "/" in a and not a.startswith("-") and not a.startswith("/")]
    if not paths:
        return None
    for base in BASES:
        root = os.path.normpath(os.path.join(repo, base))
        if all(os.path.exists(os.path.join(root, p)) for p in paths):
            return root
    return None


def run(binary, args, cwd):
    out = subprocess.run([binary] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=300, env=dict(os.environ, NO_COLOR="1", COLUMNS="200"))
    return out.stdout.decode("utf-8", "replace").rstrip("\n").split("\n")


def refresh(binary, lines, repo):
    """Returns the doc's lines with every runnable example's output replaced, and counts."""
    result, ran, kept, stale_abridged = [], 0, 0, []
    i, fenced = 0, False
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            fenced = not fenced
            result.append(line)
            i += 1
            continue
        if not (fenced and line.startswith("$ perfgap ")):
            result.append(line)
            i += 1
            continue
        # The example's output: up to the next command or the end of the block, less the blank
        # line that separates two examples in one block.
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```") and not lines[j].startswith("$ "):
            j += 1
        old = lines[i + 1:j]
        gap = []
        while old and old[-1] == "":
            gap.append(old.pop())
        args = line[len("$ perfgap "):].split()
        cwd = base_for(args, repo)
        result.append(line)
        if cwd is None:
            kept += 1
            result.extend(old)
        elif abridged(old):
            ran += 1
            now = run(binary, args, cwd)
            missing = shown_lines_missing(old, now)
            if missing:
                stale_abridged.append((line, missing))
            result.extend(old)
        else:
            ran += 1
            result.extend(run(binary, args, cwd))
        result.extend(gap)
        i = j
    return result, ran, kept, stale_abridged


def abridged(output):
    """An example its author cut: a line of its own "...", or "...}" / "...]" inside JSON."""
    return any(l.strip() == "..." or "...}" in l or "...]" in l for l in output)


def shown_lines_missing(shown, now):
    """The lines of a cut example not in today's output, in order (each a part of a line there)."""
    missing, k = [], 0
    for line in shown:
        want = line.strip()
        if not want or "..." in want:
            continue
        at = next((n for n in range(k, len(now)) if want in now[n]), None)
        if at is None:
            missing.append(line)
        else:
            k = at + 1
    return missing


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("--write", "--check"):
        print("usage: doc-examples.py BINARY DOC --write|--check", file=sys.stderr)
        return 2
    binary, doc, mode = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
    repo = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    with open(doc, encoding="utf-8") as f:
        lines = f.read().split("\n")
    new, ran, kept, stale_abridged = refresh(binary, lines, repo)
    print(f"{doc}: {ran} examples run, {kept} left as written (their files are not here)")
    for command, missing in stale_abridged:
        print(f"{doc}: cut example no longer printed, edit it by hand: {command}")
        for line in missing:
            print(f"    not printed now: {line.strip()}")
    if new == lines:
        return 1 if stale_abridged else 0
    if mode == "--write":
        tmp = doc + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(new))
        os.replace(tmp, doc)
        print(f"{doc}: rewritten")
        return 1 if stale_abridged else 0
    sys.stdout.writelines(difflib.unified_diff([l + "\n" for l in lines], [l + "\n" for l in new], doc, doc + " (the binary now)"))
    print(f"{doc}: stale; regenerate with tools/doc-examples.py build/src/perfgap {doc} --write")
    return 1


if __name__ == "__main__":
    sys.exit(main())
