#!/usr/bin/env python3
"""Runs the shell examples of one Markdown document, as written, and fails on one that cannot run.

Usage: run_examples.py REPO BINARY DOC [--list]

Every trainrig line of the document's ```sh (or unlabelled) blocks runs in order in one scratch
folder, with "this machine" a machine tree and a fake NVML (tests/docs/examples.toml says which,
and every value it changes). An example fails when it exits 2 (could not run: a flag that does
not exist, a missing file), is killed, or exceeds its time. A line of an example block that is
not a trainrig command must be listed in examples.toml as not run, with why. --list prints what
would run, and how, without running it.
"""

import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

COMMAND_WORDS = ("trainrig", "build/trainrig", "mpirun", "sudo", "make", "cmake", "scripts/")
PER_EXAMPLE_SECONDS = 120


def code_blocks(text):
    """(first line number, language, lines) of every fenced block."""
    blocks, inside, lang, start, lines = [], False, "", 0, []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            if inside:
                blocks.append((start, lang, lines))
                inside = False
            else:
                inside, lang, start, lines = True, line[3:].strip(), number + 1, []
        elif inside:
            lines.append(line)
    return blocks


def logical_lines(start, lines):
    """Joins backslash continuations: (line number, text)."""
    out, pending, at = [], "", start
    for offset, line in enumerate(lines):
        if not pending:
            at = start + offset
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append((at, pending + line))
        pending = ""
    if pending:
        out.append((at, pending))
    return out


def words_of(line):
    lexer = shlex.shlex(line, posix=True, punctuation_chars=False)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:
        return None


def is_command(words):
    if not words:
        return False
    first = next((w for w in words if not re.match(r"^[A-Z_][A-Z0-9_]*=", w)), "")
    return first.startswith(COMMAND_WORDS)


def examples_of(doc_text):
    """(line, words) of every command line in the example blocks of a document."""
    found = []
    for start, lang, lines in code_blocks(doc_text):
        if lang not in ("", "sh", "bash", "shell"):
            continue
        parsed = [(n, words_of(t)) for n, t in logical_lines(start, lines)]
        if not any(w and is_command(w) for _, w in parsed):
            continue  # a block of output, a file or a message, not commands
        for n, w in parsed:
            if w:
                found.append((n, w, " ".join(w)))
    return found


def matches(rule, text):
    return rule["match"] in text and not any(u in text for u in rule.get("unless", []))


def trainrig_path(words):
    """Index of the trainrig word, and the command path after it ("tune apply")."""
    for i, w in enumerate(words):
        if w in ("trainrig", "build/trainrig"):
            sub = [x for x in words[i + 1 : i + 3] if not x.startswith("-") and x != "..."]
            return i, sub
    return None, []


def expand_ellipsis(words, previous):
    """`trainrig plan ... --explain`: the arguments of the example above of the same command."""
    if "..." not in words:
        return words
    i, sub = trainrig_path(words)
    key = sub[0] if sub else ""
    if key not in previous:
        raise ValueError(f"`...` with no earlier `trainrig {key}` example above it")
    at = words.index("...")
    return words[:at] + previous[key] + words[at + 1 :]


class Runner:
    def __init__(self, repo, binary, doc):
        self.repo, self.binary, self.doc = Path(repo), Path(binary), doc
        self.table = tomllib.loads((self.repo / "tests/docs/examples.toml").read_text())
        self.gpu_present = Path("/dev/nvidia0").exists() and shutil.which("nvidia-smi") is not None

    # -- the scratch folder -------------------------------------------------------------------
    def prepare(self, work):
        self.work = work
        self.root = work / "machine"
        shutil.copytree(self.repo / self.table["machine"]["root"], self.root, symlinks=True)
        (work / "data").mkdir()
        (work / "textfile").mkdir()
        os.symlink(self.repo / "tests", work / "tests")
        build = work / "build"
        build.mkdir()
        os.symlink(self.binary, build / "trainrig")
        bindir = work / ".bin"
        bindir.mkdir()
        os.symlink(self.binary, bindir / "trainrig")
        os.symlink(shutil.which("python3"), bindir / "python")
        env = dict(os.environ)
        env.update(
            {
                "PATH": f"{bindir}:{env.get('PATH', '/usr/bin:/bin')}",
                "HOME": str(work),
                "TRAINRIG_ROOT": str(self.root),
                "TRAINRIG_FAKE_NVML": str(self.repo / self.table["machine"]["fake_nvml"]),
                "NO_COLOR": "1",
                # Open MPI's own switches for what the README says to add as root and on a
                # machine with fewer cores than ranks.
                "OMPI_ALLOW_RUN_AS_ROOT": "1",
                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMPI_MCA_rmaps_base_oversubscribe": "1",
            }
        )
        env.update(self.table.get("env", {}))
        self.env = env
        doc_text = (self.repo / self.doc).read_text()
        for name, spec in self.table["files"].items():
            if spec.get("when_named") and name not in doc_text:
                continue  # costly to make, and this document does not use it
            self.make_file(work / name, spec)

    def make_file(self, path, spec):
        path.parent.mkdir(parents=True, exist_ok=True)
        kind = spec["kind"]
        rng = random.Random(spec.get("seed", 1))
        if kind in ("corpus", "alpaca", "lines"):
            words = ("the model reads tokens from shards and the loader keeps every GPU busy "
                     "while checkpoints land on fast local storage so training never waits "
                     "for data nor for the network between nodes").split()
            docs = [" ".join(rng.choice(words) for _ in range(rng.randint(80, 200)))
                    for _ in range(spec["documents"])]
            if kind == "corpus":
                import json
                text = "".join(json.dumps({"text": d}) + "\n" for d in docs)
            elif kind == "alpaca":
                import json
                text = "".join(json.dumps({"instruction": d[:60], "input": "", "output": d}) + "\n"
                               for d in docs)
            else:
                text = "".join(d + "\n" for d in docs)
            if spec.get("zstd"):
                path.write_bytes(subprocess.run(["zstd", "-q", "-c"], input=text.encode(),
                                                stdout=subprocess.PIPE, check=True).stdout)
            else:
                path.write_text(text)
        elif kind == "copy":
            shutil.copyfile(self.repo / spec["path"], path)
        elif kind in ("toml", "env"):
            text = (self.repo / spec["doc"]).read_text()
            lang = "toml" if kind == "toml" else "sh"
            for _, block_lang, lines in code_blocks(text):
                if block_lang != lang:
                    continue
                if kind == "toml" and not lines[0].strip().startswith(spec["first"]):
                    continue
                if kind == "env" and is_command(words_of(lines[0]) or []):
                    continue
                path.write_text("\n".join(lines) + "\n")
                return
            raise SystemExit(f"examples.toml: no {lang} block for {path.name} in {spec['doc']}")
        elif kind == "snapshot":
            with open(path, "w") as out:
                subprocess.run([str(self.binary), "collect"], cwd=self.work, env=self.env,
                               stdout=out, check=True)
        elif kind == "report":
            # A validate report of this very machine, live (no TRAINRIG_ROOT): one with
            # measurements, for the examples that compare against an earlier report.
            env = {k: v for k, v in self.env.items()
                   if k not in ("TRAINRIG_ROOT", "TRAINRIG_FAKE_NVML")}
            subprocess.run([str(self.binary), "validate", "--level", "quick", "--report",
                            str(path)], cwd=self.work, env=env, stdout=subprocess.DEVNULL,
                           check=False)
            if not (path / "report.json").exists():
                raise SystemExit(f"examples.toml: `trainrig validate` wrote no report {path}")
        elif kind == "script":
            path.write_text(spec["text"])
            if spec.get("executable"):
                path.chmod(0o755)
        else:
            raise SystemExit(f"examples.toml: unknown file kind {kind}")

    # -- one example --------------------------------------------------------------------------
    def substitute(self, words):
        _, sub = trainrig_path(words)
        command = sub[0] if sub else ""
        table = dict(self.table["values"].get("all", {}))
        table.update(self.table["values"].get(command, {}))
        values = {k: v.format(work=self.work, root=self.root, latest_backup=self.latest_backup())
                  for k, v in table.items()}
        out = [values.get(w, w) for w in words]
        shrink = self.table.get("shrink", {}).get(sub[0] if sub else "", {})
        for i in range(len(out) - 1):
            if out[i] in shrink and out[i + 1] in shrink[out[i]]:
                out[i + 1] = shrink[out[i]][out[i + 1]]
        if out and out[0] == "sudo":
            out = out[1:]  # the machine is a tree in the scratch folder: no root needed
        return out

    def latest_backup(self):
        backups = self.root / "var/lib/trainrig/backups"
        ids = sorted(p.name for p in backups.iterdir()) if backups.is_dir() else []
        return ids[-1] if ids else "no-backup-yet"

    def plan(self, examples):
        """(line, text, action, words): action is run, parse, stop or skip:why."""
        previous, planned = {}, []
        for line, words, text in examples:
            rule = next((r for r in self.table.get("not_run", []) if matches(r, text)), None)
            if rule:
                planned.append((line, text, "skip: " + rule["why"], words))
                continue
            i, sub = trainrig_path(words)
            if i is None:
                if words[0].startswith("scripts/"):
                    planned.append((line, text, "run", words))
                    continue
                raise SystemExit(f"{self.doc}:{line}: `{text}` is neither a trainrig example nor "
                                 "listed as not run in tests/docs/examples.toml")
            words = expand_ellipsis(words, previous)
            if sub and "..." not in text:
                previous[sub[0]] = words[i + 1 + 1 :]
            text = " ".join(words)
            if any(matches(r, text) for r in self.table.get("gpu", [])) and not self.gpu_present:
                planned.append((line, text, "parse", words))
            elif any(matches(r, text) for r in self.table.get("until_stopped", [])):
                planned.append((line, text, "stop", words))
            else:
                planned.append((line, text, "run", words))
        return planned

    def run_one(self, line, text, action, words):
        words = self.substitute(words)
        env = dict(self.env)
        while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
            key, value = words[0].split("=", 1)
            env[key] = value
            words = words[1:]
        if action == "parse":
            env["TRAINRIG_PARSE_ONLY"] = "1"
        started = time.monotonic()
        if words[0].startswith("scripts/"):
            words = [str(self.repo / words[0])] + words[1:]
        # No terminal to read from, as in CI: an example that would ask is a failure here.
        proc = subprocess.Popen(words, cwd=self.work, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        if action == "stop":
            seconds = next(r["seconds"] for r in self.table["until_stopped"] if matches(r, text))
            try:
                out, err = proc.communicate(timeout=seconds)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGTERM)
                out, err = proc.communicate(timeout=30)
            ok = proc.returncode == 143
            expected = "143 after SIGTERM"
        else:
            try:
                out, err = proc.communicate(timeout=PER_EXAMPLE_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
                print(f"FAIL {self.doc}:{line}: `{text}` ran past {PER_EXAMPLE_SECONDS} s")
                return False
            rule = next((r for r in self.table.get("expect", []) if matches(r, text)), None)
            allowed = (rule["exit"],) if rule else (0, 1)
            ok = proc.returncode in allowed
            expected = " or ".join(map(str, allowed))
        took = time.monotonic() - started
        status = "ok  " if ok else "FAIL"
        print(f"{status} {self.doc}:{line} [{action}, exit {proc.returncode}, {took:.1f} s] {text}")
        if not ok:
            print(f"     expected exit {expected}; ran: {shlex.join(words)}")
            for stream in (out, err):
                for l in stream.strip().splitlines()[-15:]:
                    print("     | " + l)
        return ok


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    repo, binary, doc = sys.argv[1:4]
    runner = Runner(repo, binary, doc)
    examples = examples_of((Path(repo) / doc).read_text())
    planned = runner.plan(examples)
    if "--list" in sys.argv:
        for line, text, action, _ in planned:
            print(f"{doc}:{line} [{action}] {text}")
        return 0
    failures = 0
    with tempfile.TemporaryDirectory(prefix="trainrig-docs-") as tmp:
        runner.prepare(Path(tmp))
        for line, text, action, words in planned:
            if action.startswith("skip"):
                print(f"not run {doc}:{line}: {text} ({action[6:]})")
                continue
            failures += 0 if runner.run_one(line, text, action, words) else 1
    ran = sum(1 for p in planned if not p[2].startswith("skip"))
    print(f"{doc}: {ran - failures} of {ran} examples ran, {len(planned) - ran} not run (listed)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
