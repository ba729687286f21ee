#!/usr/bin/env python3
"""Assemble the tokenizer test corpus from files shipped in Debian packages.

Usage: build-corpus.py OUT_DIR

Writes OUT_DIR/corpus/<kind>.txt, OUT_DIR/corpus-extra/{invalid.bin,
specials.txt} and OUT_DIR/corpus-sources.json (consumed by write-manifest.py).

Files are picked only from `dpkg -L <package>` (not from whatever else happens
to be on the machine), in sorted order, with fixed byte budgets and cuts at
line boundaries, so the same package versions always give the same corpus.
"""

import bz2
import gzip
import json
import os
import re
import subprocess
import sys

# Lines containing these are dropped: the corpus must be plain text for every
# encoding, including references computed with special tokens enabled.
SPECIAL_MARKERS = (
    "<|endoftext|>", "<|fim_", "<|endofprompt|>", "<|begin_of_text|>",
    "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>",
    "<|end_header_id|>", "<|reserved_special_token",
)

KB = 1000


def python_stdlib_package():
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\\n", "libpython3.*-stdlib"],
                         capture_output=True, text=True).stdout.split()
    if not out:
        sys.exit("build-corpus: no libpython3.*-stdlib package installed")
    return sorted(out, key=lambda p: [int(x) for x in re.findall(r"\d+", p)])[-1]


PYSTD = python_stdlib_package()
PYVER = re.search(r"python(3\.\d+)", PYSTD).group(1)

# kind -> list of sources. A source is (package, path regex, budget in bytes,
# per-file cap or None, reader). With a per-file cap the sorted file list is
# thinned with a fixed stride so the picks spread over the whole package.
KINDS = {
    "english": [
        ("base-files", r"^/usr/share/common-licenses/", 400 * KB, None, "raw"),
        ("debian-policy", r"^/usr/share/doc/debian-policy/.*\.txt\.gz$", 800 * KB, None, "raw"),
    ],
    "code": [
        ("libc6-dev", r"^/usr/include/.*\.h$", 400 * KB, 12 * KB, "raw"),
        (PYSTD, r"^/usr/lib/python%s/(?!test/).*\.py$" % re.escape(PYVER), 500 * KB, 16 * KB, "raw"),
    ],
    "chinese": [
        ("manpages-zh", r"^/usr/share/man/zh_CN/.*\.gz$", 450 * KB, 16 * KB, "raw"),
        ("manpages-zh", r"^/usr/share/man/zh_TW/.*\.gz$", 350 * KB, 16 * KB, "raw"),
    ],
    "japanese": [
        ("manpages-ja", r"^/usr/share/man/ja/.*\.gz$", 800 * KB, 16 * KB, "raw"),
    ],
    "emoji": [
        ("unicode-data", r"^/usr/share/unicode/emoji/emoji-test\.txt$", 700 * KB, None, "raw"),
        ("unicode-data", r"^/usr/share/unicode/emoji/emoji-zwj-sequences\.txt$", 300 * KB, None, "raw"),
    ],
    "numbers": [
        ("unicode-data", r"^/usr/share/unicode/UnicodeData\.txt$", 400 * KB, None, "raw"),
        ("unicode-data", r"^/usr/share/unicode/extracted/DerivedNumericValues\.txt$", 120 * KB, None, "raw"),
        ("tzdata", r"^/usr/share/zoneinfo/(zone1970\.tab|zone\.tab|iso3166\.tab|leap-seconds\.list)$",
         100 * KB, None, "raw"),
    ],
    "whitespace": [
        # man pages rendered for an 80-column terminal: indentation, aligned
        # tables, runs of blank lines. (Pages over MAN_MAX_GZ are skipped:
        # rendering is the slow part of the corpus build.)
        ("manpages", r"^/usr/share/man/man7/.*\.7\.gz$", 400 * KB, 40 * KB, "man"),
        # tab-aligned #define tables
        ("linux-libc-dev", r"^/usr/include/linux/.*\.h$", 200 * KB, 6 * KB, "raw"),
        # the one CRLF text file in the Python standard library package
        (PYSTD, r"/venv/scripts/common/Activate\.ps1$", 20 * KB, None, "raw"),
    ],
}

# What `man` runs for a page, minus its pager and tty handling: tbl, preconv
# and grotty without bold/underline/overstrike, 80 columns.
GROFF = ["groff", "-mandoc", "-Tutf8", "-t", "-k", "-rLL=80n", "-rLT=80n",
         "-P-c", "-P-b", "-P-o", "-P-u"]
GROFF_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
MAN_MAX_GZ = 10 * KB


def package_files(pkg, pattern):
    out = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("build-corpus: package %s is not installed" % pkg)
    rx = re.compile(pattern)
    files = [f for f in out.stdout.split("\n")
             if rx.search(f) and os.path.isfile(f) and not os.path.islink(f)]
    if not files:
        sys.exit("build-corpus: %s has no file matching %s" % (pkg, pattern))
    return sorted(set(files))


def read_source(path, reader):
    with open(path, "rb") as f:
        data = f.read()
    if reader == "man":
        if len(data) > MAN_MAX_GZ:
            return None
        res = subprocess.run(GROFF, input=gzip.decompress(data),
                             capture_output=True, env=GROFF_ENV)
        return res.stdout if res.returncode == 0 else None
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    elif path.endswith(".bz2"):
        data = bz2.decompress(data)
    return data


def cut_lines(data, limit):
    """Longest prefix of data no longer than limit that ends with a newline."""
    if len(data) <= limit:
        return data
    end = data.rfind(b"\n", 0, limit)
    return data[:end + 1] if end >= 0 else b""


def collect(pkg, pattern, budget, cap, reader, log):
    """Concatenation of the picked files; appends one entry per file to log."""
    entries = []
    files = package_files(pkg, pattern)
    order = range(len(files))
    if cap:
        # Visit every stride-th file first, then the ones in between, so the
        # picks spread over the package; they are written in sorted order.
        stride = max(1, len(files) // max(1, budget // cap))
        order = sorted(order, key=lambda i: (i % stride, i))
    picked, used = {}, 0
    for i in order:
        if budget - used < 1 * KB:
            break
        path = files[i]
        data = read_source(path, reader)
        if not data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            entries.append({"file": path, "package": pkg, "skipped": "not UTF-8"})
            continue
        if not data.endswith(b"\n"):
            data += b"\n"
        full = len(data)
        data = cut_lines(data, min(cap or full, budget - used))
        if not data:
            continue
        used += len(data)
        picked[i] = data
        entries.append({"file": path, "package": pkg, "bytes": len(data),
                        "partial": len(data) < full, "reader": reader})
    log.extend(sorted(entries, key=lambda e: e["file"]))
    return b"".join(picked[i] for i in sorted(picked))


def drop_special_lines(data):
    keep, dropped = [], 0
    for line in data.splitlines(keepends=True):
        text = line.decode("utf-8")
        if any(m in text for m in SPECIAL_MARKERS):
            dropped += 1
        else:
            keep.append(line)
    return b"".join(keep), dropped


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def build_extra(out, english):
    extra = os.path.join(out, "corpus-extra")
    os.makedirs(extra, exist_ok=True)
    sources = []

    # Real bytes that are not UTF-8: an ELF executable and a gzip stream.
    blob = b""
    for pkg, pattern in (("coreutils", r"^/(usr/)?bin/ls$"),
                         ("debian-policy", r"/policy\.txt\.gz$")):
        path = package_files(pkg, pattern)[0]
        with open(path, "rb") as f:
            chunk = f.read(32 * 1024)
        blob += chunk
        sources.append({"file": path, "package": pkg, "bytes": len(chunk)})
    try:
        blob.decode("utf-8")
        sys.exit("build-corpus: invalid.bin unexpectedly decodes as UTF-8")
    except UnicodeDecodeError:
        pass
    write(os.path.join(extra, "invalid.bin"), blob)

    # Special-token strings spliced in at line starts every 40 lines, cycling
    # through the markers of all the encodings under test.
    specials = ["<|endoftext|>", "<|fim_prefix|>", "<|begin_of_text|>",
                "<|endofprompt|>", "<|eot_id|>", "<|fim_middle|>",
                "<|start_header_id|>", "<|end_header_id|>",
                "<|reserved_special_token_7|>", "<|fim_suffix|>", "<|end_of_text|>"]
    lines = cut_lines(english, 20 * 1024).decode("utf-8").splitlines(keepends=True)
    for n, i in enumerate(range(0, len(lines), 40)):
        lines[i] = specials[n % len(specials)] + lines[i]
    write(os.path.join(extra, "specials.txt"), "".join(lines).encode("utf-8"))
    return {"invalid.bin": sources,
            "specials.txt": [{"constructed": "first 20 KiB of corpus/english.txt "
                              "with special-token strings at every 40th line start"}]}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: build-corpus.py OUT_DIR")
    out = sys.argv[1]
    corpus = os.path.join(out, "corpus")
    os.makedirs(corpus, exist_ok=True)
    report = {}
    english = b""
    for kind, sources in KINDS.items():
        log = []
        data = b"".join(collect(*src, log) for src in sources)
        data, dropped = drop_special_lines(data)
        if kind == "english":
            english = data
        write(os.path.join(corpus, kind + ".txt"), data)
        report[kind + ".txt"] = {"sources": log, "dropped_special_lines": dropped}
        print("  corpus/%s.txt: %d bytes from %d files" % (kind, len(data), len(log)),
              file=sys.stderr)
    report["extra"] = build_extra(out, english)
    with open(os.path.join(out, "corpus-sources.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
