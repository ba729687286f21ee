#!/usr/bin/env python3
"""scripts/check-floor-plan.py: passes on this checkout, and names each kind of problem it is
for in a small planted tree: an include that points up, one its folder's "Includes:" line leaves
out, a folder not on the plan, and a function over 150 lines."""
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(REPO, "scripts", "check-floor-plan.py")

PLAN = """# plan

### `core/` (layer 0)

Includes: nothing of trainrig's.

### `low/` (layer 1)

Includes: `core`.

### `high/` (layer 2)

Includes: `core`, `low`.
"""


def run(repo):
    r = subprocess.run([sys.executable, CHECK, repo], capture_output=True, text=True)
    return r.returncode, r.stdout


def write(root, path, text):
    os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
    with open(os.path.join(root, path), "w") as f:
        f.write(text)


def main():
    code, out = run(REPO)
    assert code == 0, out
    with tempfile.TemporaryDirectory() as tree:
        write(tree, "docs/floor-plan.md", PLAN)
        write(tree, "src/core/a.h", "#pragma once\n")
        write(tree, "src/low/b.cpp", '#include "core/a.h"\n#include "low/b.h"\n')
        write(tree, "src/high/c.cpp", '#include "low/b.h"\n#include "core/a.h"\n')
        code, out = run(tree)
        assert code == 0, out
        # Each problem, planted one at a time, is named with its file and line.
        planted = [
            ("src/low/up.cpp", '#include "high/c.h"\n',
             "src/low/up.cpp:1: includes high/c.h: high/ (layer 2) is not below low/ (layer 1)"),
            ("src/new/d.cpp", "int x;\n", "src/new/d.cpp: its folder new/ is not on docs/floor-plan.md"),
            ("src/low/long.cpp", "int f() {\n" + "    x();\n" * 150 + "}\n",
             "src/low/long.cpp:1: f is 152 lines"),
        ]
        for path, text, expected in planted:
            write(tree, path, text)
            code, out = run(tree)
            assert code == 1 and expected in out, (expected, out)
            os.remove(os.path.join(tree, path))
        # A lower include the plan does not name, and a named one never used.
        with open(os.path.join(tree, "docs/floor-plan.md"), "w") as f:
            f.write(PLAN.replace("Includes: `core`, `low`.", "Includes: `low`."))
        code, out = run(tree)
        assert code == 1 and "does not name core" in out, out
        shutil.rmtree(os.path.join(tree, "src/high"))
        code, out = run(tree)
        assert code == 1 and "high/ is on the plan but not in src/" in out, out
    print("floor plan check: passes here, and names each planted problem")


if __name__ == "__main__":
    main()
