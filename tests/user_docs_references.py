#!/usr/bin/env python3
"""README, docs and the CLI's help cite nothing a user of the repository lacks.

    python3 tests/user_docs_references.py SOURCE_DIR [LOOPDYN_CLI]

Fails (exit 1, printing file:line and the offending text) when README.md, any docs/**/*.md or
any public header include/**/*.hpp cites a path under shared/ (the project's design folder, not part of the repository), the design
file benchmarks.md, or an internal tracker number ("issue 16", "Issues #3"); and when
docs/references.md is missing or has no entry for one of the five papers 000 to 004 (a line that
starts with the id, as a list item, heading or table cell, and carries a year).

Given the path of the loopdyn executable, it also runs `loopdyn --help` and `--help` of every
subcommand that help lists, and of their subcommands in turn (`loopdyn generate ladder --help`),
and fails on the same patterns in their output. Python 3, standard library only.
"""

import os
import re
import subprocess
import sys

PATTERNS = [
    ("a path under shared/", re.compile(r"shared/")),
    ("the design file benchmarks.md", re.compile(r"benchmarks\.md")),
    ("a tracker number", re.compile(r"\b[Ii]ssues? #?\d+")),
]
PAPERS = ["000", "001", "002", "003", "004"]
HELP_DEPTH = 3


def offending(lines):
    """(line number, pattern description, text) for every match, also across a line break."""
    found = []
    for i, line in enumerate(lines):
        for what, pattern in PATTERNS:
            if pattern.search(line):
                found.append((i + 1, what, line.strip()))
        # A citation wrapped over two lines ("(issue\n  36)"): match the joined pair and keep the
        # matches that start on this line and end on the next.
        if i + 1 < len(lines):
            head = line.rstrip()
            joined = head + " " + lines[i + 1].lstrip()
            for what, pattern in PATTERNS:
                for m in pattern.finditer(joined):
                    if m.start() < len(head) < m.end():
                        found.append((i + 1, what, (head + " / " + lines[i + 1].strip()).strip()))
    return found


def user_docs(source):
    """README, docs/**/*.md and the public headers (installed with the library: their comments are
    its reference documentation)."""
    docs = [os.path.join(source, "README.md")]
    for folder, ending in (("docs", ".md"), ("include", ".hpp")):
        for root, dirs, files in os.walk(os.path.join(source, folder)):
            dirs.sort()
            docs += [os.path.join(root, f) for f in sorted(files) if f.endswith(ending)]
    return docs


def check_docs(source):
    failures = []
    for path in user_docs(source):
        rel = os.path.relpath(path, source)
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError as e:
            failures.append(f"{rel}: cannot be read: {e}")
            continue
        for line, what, text in offending(lines):
            failures.append(f"{rel}:{line}: {what}: {text}")
    return failures


def check_references(source):
    path = os.path.join(source, "docs", "references.md")
    if not os.path.isfile(path):
        return ["docs/references.md: missing (the bibliography of the papers 000 to 004)"]
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    failures = []
    for paper in PAPERS:
        # "- **000** — K.S. Anderson, ... 2003 ...", "### 000 ...", "| 000 | ... |"
        # (an entry may wrap: its year within its first four lines).
        entry = re.compile(r"^\s*(?:[-*+]\s+|\d+\.\s+|#{1,6}\s+|\|\s*)?[*_\[]*" + paper + r"(?![\w.])")
        year = re.compile(r"\b(?:19|20)\d\d\b")
        if not any(entry.match(line) and any(year.search(l) for l in lines[i:i + 4])
                   for i, line in enumerate(lines)):
            failures.append(f"docs/references.md: no entry for paper {paper} (a line starting with "
                            f"'{paper}' as a list item, heading or table cell, with its year)")
    return failures


def help_text(cli, args):
    try:
        done = subprocess.run([cli] + args + ["--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"cannot run: {e}"
    text = done.stdout.decode("utf-8", errors="replace")
    if done.returncode != 0:
        return text, f"exit code {done.returncode}"
    return text, None


def subcommands(text):
    """The names a CLI11 help lists under "Subcommands:"."""
    names = []
    in_section = False
    for line in text.splitlines():
        if re.match(r"^\S.*:\s*$", line):
            in_section = line.strip() == "Subcommands:"
            continue
        if in_section:
            m = re.match(r"^  ([A-Za-z0-9][\w-]*)(?:\s{2,}|$)", line)
            if m:
                names.append(m.group(1))
    return names


def check_cli(cli):
    failures = []
    if not (os.path.isfile(cli) and os.access(cli, os.X_OK)):
        return [f"{cli}: not an executable"], 0
    pending = [[]]
    seen = set()
    while pending:
        args = pending.pop(0)
        if tuple(args) in seen:
            continue
        seen.add(tuple(args))
        label = " ".join(["loopdyn"] + args + ["--help"])
        text, error = help_text(cli, args)
        if error:
            failures.append(f"{label}: {error}")
        if text is None:
            continue
        for line, what, shown in offending(text.splitlines()):
            failures.append(f"{label}:{line}: {what}: {shown}")
        if len(args) < HELP_DEPTH:
            pending += [args + [name] for name in subcommands(text)]
    if len(seen) < 2:
        failures.append(f"{cli} --help lists no subcommands: the help's layout changed, update this test")
    return failures, len(seen)


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    source = argv[1]
    failures = check_docs(source) + check_references(source)
    checked = "README.md, docs/**/*.md, include/**/*.hpp, docs/references.md"
    if len(argv) == 3:
        cli_failures, pages = check_cli(argv[2])
        failures += cli_failures
        checked += f", the CLI's --help ({pages} pages)"
    if failures:
        print("User-facing text cites what a user of the repository does not have, or the bibliography "
              "is incomplete:")
        for f in failures:
            print("  " + f)
        print(f"{len(failures)} problem(s). Describe the thing itself, or cite docs/references.md, a file "
              "of the repository or a command instead.")
        return 1
    print(f"ok: {checked}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
