"""Checks JSON documents against a JSON Schema (draft 2020-12): check_json_schema.py SCHEMA FILE...

Prints each violation with its path and exits 1 when any file violates the schema; exits 3 when
the jsonschema package is missing (Debian: python3-jsonschema, installed by scripts/install-deps.sh).
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("check_json_schema.py: the jsonschema package is missing (apt-get install "
          "python3-jsonschema)", file=sys.stderr)
    sys.exit(3)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in argv[2:]:
        with open(path) as f:
            doc = json.load(f)
        for error in sorted(validator.iter_errors(doc), key=lambda e: list(e.path)):
            where = "/".join(str(p) for p in error.path) or "(top)"
            print(f"{path}: {where}: {error.message[:300]}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
