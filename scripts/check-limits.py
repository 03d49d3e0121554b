#!/usr/bin/env python3
"""The code's shape limits, checked by `make test` (docs/ARCHITECTURE.md, "How it is built").

- no type over 800 lines, counting its extensions (per module);
- at most 15 stored properties per type in MonsoonEngine;
- no stored Bool on the engine's Transfer;
- rows read by column name, never by position (`row.text(4)`);
- no download selected by a prefix of its id;
- SQL on `episodes` in at most two files;
- the shared queue's jobs table named only by the queue's own files (`Queue/`, `Schema/`), and
  the engines' old tables only by the migration that drops them;
- no program's module imports full Foundation (FoundationEssentials only: full Foundation
  brings 34 MB of ICU data), and `--binary PATH` checks a built `monsoon` holds or loads none
  (with `--max-stripped-mb N`, that it is at most N MB stripped: `make release-monsoon` asks 20).

Swift is read with a brace counter that skips strings and comments: enough for this code base,
whose declarations open on one line. `--report` prints the figures without failing.
"""
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = ROOT / "Sources"
MAX_TYPE_LINES = 800
MAX_STORED = 15
MAX_EPISODE_SQL_FILES = 2
# A type still being split into parts may stand over the limits, but never grow past where it
# stands: (lines with its extensions, stored properties). Lower these as it shrinks; remove an
# entry once the type is within the limits.
CEILINGS = {}

DECL = re.compile(
    r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|open|final|indirect)\s+)*"
    r"(class|struct|enum|actor|extension)\s+([A-Za-z_][\w.]*)"
)
STORED = re.compile(
    r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|open|final|weak|unowned|unowned\(unsafe\)|unowned\(safe\)|lazy"
    r"|nonisolated\(unsafe\)|private\(set\)|fileprivate\(set\)|package\(set\)|internal\(set\)|public\(set\))\s+)*"
    r"(var|let)\s+([A-Za-z_]\w*)\s*(.*)$"
)
POSITIONAL = re.compile(r"\b(?:row|r)\.(?:text|int|int64|optionalInt|double|bool|date|data|isNull|string|optionalString)\(\d+\)")
FOUNDATION = re.compile(r"^\s*(?:@\w+\s+)*import\s+(?:Foundation|FoundationInternationalization|FoundationNetworking|FoundationXML)\s*$", re.M)
# What programs are built from (the tests may use full Foundation: they are not shipped).
PROGRAMS = [SOURCES, ROOT / "Benchmarks", ROOT / "Tests" / "Soak"]
FULL_FOUNDATION_LIBRARIES = ("libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so")
ID_PREFIX = re.compile(r"withIDPrefix|\bid\s+(?:NOT\s+)?(?:LIKE|GLOB)\b|substr\(\s*id\b")
EPISODE_SQL = re.compile(r"\b(?:FROM|UPDATE|INTO|JOIN|TABLE)\s+episodes\b")
JOBS_TABLE = re.compile(r"\bmonsoon_jobs")
JOBS_TABLE_FOLDERS = ("Sources/MonsoonCluster/Queue/", "Sources/MonsoonCluster/Schema/")
ENGINE_TABLES = re.compile(r"\bmonsoon_engine_")
ENGINE_TABLES_FILE = "Sources/MonsoonCluster/Schema/ClusterSchema+Migrations.swift"


def strip(text):
    """Blanks out string literals and comments, keeping line breaks, so braces count true."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            j = n if j < 0 else j + 3
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + '"'); i = j
        elif c == '"':
            j, depth = i + 1, 0
            while j < n:
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "(":
                    depth += 1; j += 2; continue
                if depth and text[j] == ")":
                    depth -= 1
                elif depth and text[j] == "(":
                    depth += 1
                elif text[j] == "\\":
                    j += 2; continue
                elif text[j] == '"' and not depth:
                    break
                elif text[j] == "\n":
                    break
                j += 1
            out.append('"' + " " * (j - i - 1) + '"'); i = j + 1
        else:
            out.append(c); i += 1
    return "".join(out)


def types_in(path, text):
    """(qualified name, kind, first line, last line, body lines at depth 1) for every type and extension."""
    lines = strip(text).split("\n")
    found, stack, depth = [], [], 0
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        match = DECL.match(stripped)
        if match and "{" in line and not re.search(r"\bfunc\b|\binit\b", stripped.split(match.group(2))[0]):
            kind, name = match.groups()
            outer = [s["name"] for s in stack if s["kind"] != "extension" or True]
            qualified = ".".join(outer + [name]) if kind != "extension" else name
            stack.append({"name": qualified, "kind": kind, "start": number, "depth": depth, "members": []})
        elif stack and depth == stack[-1]["depth"] + 1:
            stack[-1]["members"].append((number, stripped))
        depth += line.count("{") - line.count("}")
        while stack and depth <= stack[-1]["depth"]:
            entry = stack.pop()
            found.append((entry["name"], entry["kind"], entry["start"], number, entry["members"]))
    return found


def stored_properties(members):
    names = []
    for _, line in members:
        if re.match(r"^(?:.*\s)?(static|class)\s+(var|let)\b", line):
            continue
        match = STORED.match(line)
        if not match:
            continue
        rest = match.group(3)
        if match.group(1) == "var" and "{" in rest and "=" not in rest.split("{")[0] and not re.search(r"didSet|willSet", rest):
            continue  # computed
        names.append((match.group(2), rest))
    return names


def binary_failures(path, max_stripped_mb=None):
    """Full Foundation in a built program: ICU's data linked in (a static build), or its libraries
    loaded; and, when given a bound, a stripped copy larger than it."""
    failures = []
    if max_stripped_mb is not None:
        with tempfile.TemporaryDirectory() as folder:
            stripped = pathlib.Path(folder) / "monsoon"
            subprocess.run(["strip", "-o", str(stripped), str(path)], check=True)
            size = stripped.stat().st_size / 1e6
            if size > max_stripped_mb:
                failures.append(f"{path}: {size:.1f} MB stripped, more than {max_stripped_mb} MB")
    if b"icudt" in path.read_bytes():
        failures.append(f"{path}: holds ICU's data (icudt): a module uses full Foundation")
    dynamic = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    for library in FULL_FOUNDATION_LIBRARIES:
        if f"[{library}]" in dynamic:
            failures.append(f"{path}: loads {library}: a module uses full Foundation")
    return failures


def main():
    report = "--report" in sys.argv
    failures = []
    if "--binary" in sys.argv:
        bound = float(sys.argv[sys.argv.index("--max-stripped-mb") + 1]) if "--max-stripped-mb" in sys.argv else None
        failures += binary_failures(pathlib.Path(sys.argv[sys.argv.index("--binary") + 1]), bound)
    for folder in PROGRAMS:
        for path in sorted(folder.rglob("*.swift")):
            if FOUNDATION.search(path.read_text()):
                failures.append(f"{path.relative_to(ROOT)}: imports full Foundation; import FoundationEssentials (and Glibc, Dispatch)")
    sizes, stored = {}, {}
    episode_files = set()
    for path in sorted(SOURCES.rglob("*.swift")):
        module = path.relative_to(SOURCES).parts[0]
        text = path.read_text()
        relative = path.relative_to(ROOT)
        for number, line in enumerate(text.split("\n"), 1):
            if POSITIONAL.search(line):
                failures.append(f"{relative}:{number}: a row read by position; read it by column name")
            if ID_PREFIX.search(line):
                failures.append(f"{relative}:{number}: downloads selected by a prefix of their id; select them by owner")
        if EPISODE_SQL.search(text):
            episode_files.add(str(relative))
        if JOBS_TABLE.search(text) and not str(relative).startswith(JOBS_TABLE_FOLDERS):
            failures.append(f"{relative}: names monsoon_jobs; ask the queue (JobQueue, in Queue/) instead")
        if ENGINE_TABLES.search(text) and str(relative) != ENGINE_TABLES_FILE:
            failures.append(f"{relative}: names a monsoon_engine_ table; the engines keep their queues in memory")
        for name, kind, start, end, members in types_in(path, text):
            key = (module, name)
            sizes[key] = sizes.get(key, 0) + end - start + 1
            if module == "MonsoonEngine" and kind != "extension":
                props = stored_properties(members)
                stored[key] = props
                if name.split(".")[-1] == "Transfer":
                    for prop, rest in props:
                        if re.match(r"^:\s*Bool\b", rest) or re.match(r"^=\s*(true|false)\b", rest):
                            failures.append(f"{relative}: Transfer stores the Bool `{prop}`; make it part of its phase")
    for (module, name), lines in sorted(sizes.items(), key=lambda item: -item[1]):
        limit = max(MAX_TYPE_LINES, CEILINGS.get((module, name), (0, 0))[0])
        if lines > limit:
            failures.append(f"{module}.{name}: {lines} lines with its extensions (at most {limit})")
    for (module, name), props in sorted(stored.items(), key=lambda item: -len(item[1])):
        limit = max(MAX_STORED, CEILINGS.get((module, name), (0, 0))[1])
        if len(props) > limit:
            failures.append(f"{module}.{name}: {len(props)} stored properties (at most {limit})")
    for (module, name), (lines, props) in CEILINGS.items():
        print(f"check-limits: {module}.{name} is still being split: {sizes.get((module, name), 0)} lines "
              f"(ceiling {lines}, limit {MAX_TYPE_LINES}), {len(stored.get((module, name), []))} stored properties "
              f"(ceiling {props}, limit {MAX_STORED})")
    if len(episode_files) > MAX_EPISODE_SQL_FILES:
        failures.append(f"SQL on `episodes` in {len(episode_files)} files (at most {MAX_EPISODE_SQL_FILES}): " + ", ".join(sorted(episode_files)))
    if report:
        print("largest types:", ", ".join(f"{m}.{n} {l}" for (m, n), l in sorted(sizes.items(), key=lambda i: -i[1])[:8]))
        print("most stored properties:", ", ".join(f"{n} {len(p)}" for (_, n), p in sorted(stored.items(), key=lambda i: -len(i[1]))[:8]))
    for failure in failures:
        print(failure, file=sys.stderr)
    if failures and not report:
        print(f"check-limits: {len(failures)} over the limits", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
