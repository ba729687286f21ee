#!/usr/bin/env python3
"""Write CACHE_DIR/MANIFEST.json: what the cache holds and where it came from.

Usage: write-manifest.py CACHE_DIR VERSION DEBIAN_PACKAGE...

Lists every file with its size and sha256, the Debian files each corpus file
was cut from (from corpus-sources.json, left by build-corpus.py and removed
here), the Debian package versions and the npm package versions.
"""

import hashlib
import json
import os
import subprocess
import sys


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def debian_versions(packages):
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n"] + packages,
                         capture_output=True, text=True, check=True).stdout
    return dict(sorted(line.split(" ", 1) for line in out.splitlines()))


def npm_versions(cache):
    root = os.path.join(cache, "npm", "node_modules")
    names = []
    for d in sorted(os.listdir(root)):
        if d.startswith("@"):
            names += [d + "/" + s for s in sorted(os.listdir(os.path.join(root, d)))]
        elif not d.startswith("."):
            names.append(d)
    found = {}
    for name in names:
        meta_path = os.path.join(root, name, "package.json")
        if os.path.exists(meta_path):
            with open(meta_path) as f:
                found[name] = json.load(f)["version"]
    return found


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: write-manifest.py CACHE_DIR VERSION DEBIAN_PACKAGE...")
    cache, version, packages = sys.argv[1], sys.argv[2], sys.argv[3:]
    sources_path = os.path.join(cache, "corpus-sources.json")
    with open(sources_path) as f:
        sources = json.load(f)

    files = {}
    for dirpath, dirnames, filenames in os.walk(cache):
        rel_dir = os.path.relpath(dirpath, cache)
        if rel_dir == "npm":
            dirnames[:] = []
            continue
        dirnames.sort()
        for name in sorted(filenames):
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if rel in ("corpus-sources.json", "READY", "MANIFEST.json"):
                continue
            path = os.path.join(dirpath, name)
            files[rel] = {"bytes": os.path.getsize(path), "sha256": sha256(path)}

    corpus = {}
    for name, info in sources.items():
        if name == "extra":
            continue
        rel = os.path.join("corpus", name)
        corpus[name] = dict(files[rel], **info)
    extra = {name: dict(files[os.path.join("corpus-extra", name)], sources=src)
             for name, src in sources["extra"].items()}

    with open("/etc/debian_version") as f:
        debian_release = f.read().strip()
    manifest = {
        "version": version,
        "generator": "tests/data/fetch-tokenizer-data.sh",
        "debian": {"release": debian_release, "packages": debian_versions(packages)},
        "npm": npm_versions(cache),
        "corpus": corpus,
        "corpus_extra": extra,
        "files": files,
    }
    with open(os.path.join(cache, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")
    os.remove(sources_path)


if __name__ == "__main__":
    main()
