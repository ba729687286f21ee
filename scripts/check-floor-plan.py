#!/usr/bin/env python3
"""Checks src/ against docs/floor-plan.md: every include points to a folder of a lower layer
that the including folder's "Includes:" line names, every folder is on the plan, and no function
is longer than 150 lines. Prints one line per problem and exits 1 when there is one.

Usage: check-floor-plan.py [REPO]   (REPO defaults to the checkout this script is in)
"""
import os
import re
import sys

MAX_FUNCTION_LINES = 150
SOURCE = re.compile(r"\.(h|cpp|cu|cuh|in)$")
# Folders one level down that are a unit of their own: the two GPU plugins.
SUB_UNITS = ("cuda/bench", "train/cuda")


def unit_of(path):
    """The plan's unit of a path relative to src/: 'doctor', 'cuda/bench', 'main.cpp'."""
    for sub in SUB_UNITS:
        if path.startswith(sub + "/"):
            return sub
    return path.split("/")[0] if "/" in path else path


def read_plan(repo):
    """{unit: (layer, set of units it may include, line)} from the plan's headings."""
    plan, current = {}, None
    path = os.path.join(repo, "docs", "floor-plan.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for number, line in enumerate(text.split("\n"), 1):
        heading = re.match(r"^### `([a-z_/.]+?)/?` \(layer (\d+)\)$", line)
        if heading:
            current = heading.group(1)
            plan[current] = [int(heading.group(2)), None, number]
        elif current and line.startswith("Includes:"):
            # The sentence may wrap onto the next lines: read to its full stop.
            sentence = " ".join(text.split("\n")[number - 1:number + 4]).split(".")[0]
            plan[current][1] = set(re.findall(r"`([a-z_/]+)`", sentence))
            current = None
    return plan


def strip_comments_and_strings(source):
    """The source with comments and string literals emptied, newlines kept."""
    out, i, n = [], 0, len(source)
    while i < n:
        if source.startswith("//", i):
            j = source.find("\n", i)
            i = n if j < 0 else j
        elif source.startswith("/*", i):
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * source.count("\n", i, j))
            i = j
        elif source[i] == "R" and source.startswith('R"', i) and (i == 0 or not (source[i - 1].isalnum() or source[i - 1] == "_")):
            m = re.match(r'R"([^(]*)\(', source[i:i + 20])
            end = ")" + m.group(1) + '"' if m else '"'
            j = source.find(end, i + (len(m.group(0)) if m else 2))
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * source.count("\n", i, j))
            i = j
        elif source[i] in "\"'":
            quote, j = source[i], i + 1
            while j < n and source[j] != quote:
                j += 2 if source[j] == "\\" else 1
            out.append(quote * 2)
            i = j + 1
        else:
            out.append(source[i])
            i += 1
    return "".join(out)


def long_functions(source):
    """(first line, lines, name) of each function body at namespace scope over the limit."""
    lines = strip_comments_and_strings(source).split("\n")
    found, depth, start, name = [], 0, None, None
    for k, line in enumerate(lines):
        if re.match(r"^(inline\s+)?namespace\b", line) or line.startswith('extern "'):
            continue
        if depth == 0 and re.match(r"^}\s*$", line):
            continue  # a namespace's end
        if (depth == 0 and line and not line[0].isspace() and "(" in line
                and not re.match(r"^(struct|class|enum|union|template|#|})", line)):
            start, name = k, re.sub(r"\s+", " ", line.split("(")[0]).split(" ")[-1]
        before = depth
        depth += line.count("{") - line.count("}")
        if before >= 1 and depth == 0 and start is not None and k > start:
            if k - start + 1 > MAX_FUNCTION_LINES:
                found.append((start + 1, k - start + 1, name))
            start = None
        if depth == 0 and ";" in line:
            start = None
    return found


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = os.path.join(repo, "src")
    plan = read_plan(repo)
    problems = []
    for unit, (layer, includes, line) in sorted(plan.items()):
        if includes is None:
            problems.append(f"docs/floor-plan.md:{line}: {unit}/ has no \"Includes:\" line")
            plan[unit][1] = set()
            continue
        for other in sorted(includes):
            if other not in plan:
                problems.append(f"docs/floor-plan.md:{line}: {unit}/ may include {other}/, which is not on the plan")
            elif plan[other][0] >= layer:
                problems.append(f"docs/floor-plan.md:{line}: {unit}/ (layer {layer}) may include {other}/ (layer {plan[other][0]}), which is not below it")
    units_seen, used = set(), {u: set() for u in plan}
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not SOURCE.search(name):
                continue
            rel = os.path.relpath(os.path.join(root, name), src)
            unit = unit_of(rel)
            units_seen.add(unit)
            if unit not in plan:
                problems.append(f"src/{rel}: its folder {unit}/ is not on docs/floor-plan.md")
                continue
            with open(os.path.join(root, name), encoding="utf-8") as f:
                text = f.read()
            for number, line in enumerate(text.split("\n"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m or "/" not in m.group(1):
                    continue
                target = unit_of(m.group(1))
                if target == unit or target not in plan:
                    continue  # its own folder, or not trainrig's (a generated or emulator header)
                used[unit].add(target)
                if plan[target][0] >= plan[unit][0]:
                    problems.append(f"src/{rel}:{number}: includes {m.group(1)}: {target}/ (layer {plan[target][0]}) is not below {unit}/ (layer {plan[unit][0]})")
                elif target not in plan[unit][1]:
                    problems.append(f"src/{rel}:{number}: includes {m.group(1)}: {unit}/'s \"Includes:\" line in docs/floor-plan.md does not name {target}")
            if name.endswith((".cpp", ".cu", ".h", ".cuh")):
                for first, length, function in long_functions(text):
                    problems.append(f"src/{rel}:{first}: {function} is {length} lines; split it by phase (at most {MAX_FUNCTION_LINES})")
    for unit, (layer, includes, line) in sorted(plan.items()):
        if unit not in units_seen:
            problems.append(f"docs/floor-plan.md:{line}: {unit}/ is on the plan but not in src/")
        for other in sorted(includes - used[unit]):
            problems.append(f"docs/floor-plan.md:{line}: {unit}/ is said to include {other}/, and no file of it does")
    for p in problems:
        print(p)
    if problems:
        print(f"check-floor-plan: {len(problems)} problem(s); docs/floor-plan.md says where things go")
        return 1
    print(f"check-floor-plan: {len(plan)} folders in {1 + max(l for l, _, _ in plan.values())} layers; every include points down, no function over {MAX_FUNCTION_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
