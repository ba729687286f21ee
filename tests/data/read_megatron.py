#!/usr/bin/env python3
"""Independent reader for Megatron-LM indexed datasets (PREFIX.idx + PREFIX.bin).

Written from the format description alone, standard library only, so the C++
writer can be checked against something that shares no code with it.

PREFIX.idx, all little-endian:
    magic           9 bytes  b"MMIDIDX\\x00\\x00"
    version         u64      must be 1
    dtype code      u8       1 u8, 2 i8, 3 i16, 4 i32, 5 i64, 6 f64, 7 f32, 8 u16
    sequence_count  u64
    document_count  u64      number of documents + 1
    lengths         i32[sequence_count]   tokens per sequence
    pointers        i64[sequence_count]   byte offset of each sequence in .bin
    doc_indices     i64[document_count]   0, ..., sequence_count
PREFIX.bin: the tokens of all sequences back to back.

Usage:
    read_megatron.py PREFIX [--max N]
        Prints {"dtype": "u16", "sequences": N, "documents": [[ids...], ...]}
        (one list per sequence). Exits 1 with a one-line message if anything
        is inconsistent.
    read_megatron.py --self-test
        Writes small datasets (valid and broken) to a temporary directory and
        checks how they are read.
"""

import argparse
import array
import json
import math
import os
import struct
import sys
import tempfile

MAGIC = b"MMIDIDX\x00\x00"
HEADER = struct.Struct("<9sQBQQ")
# dtype code -> (name, array typecode, item size)
DTYPES = {
    1: ("u8", "B", 1), 2: ("i8", "b", 1), 3: ("i16", "h", 2), 4: ("i32", "i", 4),
    5: ("i64", "q", 8), 6: ("f64", "d", 8), 7: ("f32", "f", 4), 8: ("u16", "H", 2),
}


class FormatError(Exception):
    pass


def le_array(typecode, data):
    arr = array.array(typecode)
    if arr.itemsize * 8 != {"B": 8, "b": 8, "h": 16, "H": 16, "i": 32, "q": 64, "f": 32, "d": 64}[typecode]:
        raise FormatError("platform array type %r has an unexpected size" % typecode)
    arr.frombytes(data)
    if sys.byteorder == "big":
        arr.byteswap()
    return arr


def read_index(idx_path):
    with open(idx_path, "rb") as f:
        data = f.read()
    if len(data) < HEADER.size:
        raise FormatError("%s: %d bytes, shorter than the %d-byte header" % (idx_path, len(data), HEADER.size))
    magic, version, code, seq_count, doc_count = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise FormatError("%s: bad magic %r" % (idx_path, magic))
    if version != 1:
        raise FormatError("%s: version %d, expected 1" % (idx_path, version))
    if code not in DTYPES:
        raise FormatError("%s: unknown dtype code %d" % (idx_path, code))
    expected = HEADER.size + 4 * seq_count + 8 * seq_count + 8 * doc_count
    if len(data) != expected:
        raise FormatError("%s: %d bytes, header (%d sequences, %d document indices) implies %d"
                          % (idx_path, len(data), seq_count, doc_count, expected))
    off = HEADER.size
    lengths = le_array("i", data[off:off + 4 * seq_count])
    off += 4 * seq_count
    pointers = le_array("q", data[off:off + 8 * seq_count])
    off += 8 * seq_count
    doc_idx = le_array("q", data[off:off + 8 * doc_count])
    return code, lengths, pointers, doc_idx


def validate(code, lengths, pointers, doc_idx, bin_size):
    itemsize = DTYPES[code][2]
    expected_ptr = 0
    for i, (n, p) in enumerate(zip(lengths, pointers)):
        if n < 0:
            raise FormatError("sequence %d has negative length %d" % (i, n))
        if p != expected_ptr:
            raise FormatError("sequence %d starts at byte %d, expected %d (previous pointer + length x %d)"
                              % (i, p, expected_ptr, itemsize))
        expected_ptr += n * itemsize
    if bin_size != expected_ptr:
        raise FormatError(".bin is %d bytes, the index describes %d" % (bin_size, expected_ptr))
    if len(doc_idx) == 0:
        raise FormatError("no document indices (need at least the leading 0)")
    if doc_idx[0] != 0:
        raise FormatError("document indices start at %d, expected 0" % doc_idx[0])
    for i in range(1, len(doc_idx)):
        if doc_idx[i] < doc_idx[i - 1]:
            raise FormatError("document index %d (%d) is below the previous one (%d)"
                              % (i, doc_idx[i], doc_idx[i - 1]))
    if doc_idx[-1] != len(lengths):
        raise FormatError("document indices end at %d, expected sequence_count %d"
                          % (doc_idx[-1], len(lengths)))


def read_dataset(prefix, max_sequences=None):
    idx_path, bin_path = prefix + ".idx", prefix + ".bin"
    for p in (idx_path, bin_path):
        if not os.path.isfile(p):
            raise FormatError("%s: no such file" % p)
    code, lengths, pointers, doc_idx = read_index(idx_path)
    validate(code, lengths, pointers, doc_idx, os.path.getsize(bin_path))
    name, typecode, itemsize = DTYPES[code]
    count = len(lengths) if max_sequences is None else min(max_sequences, len(lengths))
    docs = []
    with open(bin_path, "rb") as f:
        for i in range(count):
            f.seek(pointers[i])
            tokens = le_array(typecode, f.read(lengths[i] * itemsize)).tolist()
            if typecode in "fd" and not all(math.isfinite(t) for t in tokens):
                raise FormatError("sequence %d holds a non-finite value" % i)
            docs.append(tokens)
    return {"dtype": name, "sequences": len(lengths), "documents": docs}


def write_dataset(prefix, code, sequences, doc_idx=None):
    """Minimal writer for the self-test."""
    _, typecode, itemsize = DTYPES[code]
    lengths, pointers, pos = [], [], 0
    with open(prefix + ".bin", "wb") as f:
        for seq in sequences:
            arr = array.array(typecode, seq)
            if sys.byteorder == "big":
                arr.byteswap()
            f.write(arr.tobytes())
            lengths.append(len(seq))
            pointers.append(pos)
            pos += len(seq) * itemsize
    if doc_idx is None:
        doc_idx = list(range(len(sequences) + 1))
    with open(prefix + ".idx", "wb") as f:
        f.write(HEADER.pack(MAGIC, 1, code, len(sequences), len(doc_idx)))
        f.write(struct.pack("<%di" % len(lengths), *lengths))
        f.write(struct.pack("<%dq" % len(pointers), *pointers))
        f.write(struct.pack("<%dq" % len(doc_idx), *doc_idx))


def self_test():
    seqs = [[1, 2, 3], [], [65535, 0], [7]]
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "ds")
        write_dataset(p, 8, seqs, [0, 2, 4])
        got = read_dataset(p)
        assert got == {"dtype": "u16", "sequences": 4, "documents": seqs}, got
        assert read_dataset(p, 2)["documents"] == seqs[:2]
        for code, sample in ((1, [[0, 255]]), (2, [[-128, 127]]), (3, [[-32768, 32767]]),
                             (4, [[-2**31, 2**31 - 1]]), (5, [[-2**63, 2**63 - 1]]),
                             (6, [[0.5, -1e300]]), (7, [[0.25, -2.0]])):
            write_dataset(p, code, sample)
            assert read_dataset(p)["documents"] == sample, code
        write_dataset(p, 4, [])
        assert read_dataset(p) == {"dtype": "i32", "sequences": 0, "documents": []}

        def broken(mutate, message):
            write_dataset(p, 8, seqs, [0, 2, 4])
            with open(p + ".idx", "rb") as f:
                idx = bytearray(f.read())
            with open(p + ".bin", "rb") as f:
                binary = bytearray(f.read())
            idx, binary = mutate(idx, binary)
            with open(p + ".idx", "wb") as f:
                f.write(idx)
            with open(p + ".bin", "wb") as f:
                f.write(binary)
            try:
                read_dataset(p)
            except FormatError as e:
                assert message in str(e), (message, str(e))
            else:
                raise AssertionError("accepted a dataset with: " + message)

        ptr0 = HEADER.size + 4 * 4
        doc0 = ptr0 + 8 * 4
        broken(lambda i, b: (b"X" + i[1:], b), "bad magic")
        broken(lambda i, b: (i[:9] + struct.pack("<Q", 2) + i[17:], b), "version 2")
        broken(lambda i, b: (i[:17] + b"\x09" + i[18:], b), "unknown dtype code 9")
        broken(lambda i, b: (i + b"\0", b), "implies")
        broken(lambda i, b: (i[:-1], b), "implies")
        broken(lambda i, b: (i, b + b"\0\0"), ".bin is 14 bytes")
        broken(lambda i, b: (i, b[:-2]), ".bin is 10 bytes")
        broken(lambda i, b: (i[:ptr0 + 8] + struct.pack("<q", 8) + i[ptr0 + 16:], b), "sequence 1 starts at byte 8")
        broken(lambda i, b: (i[:HEADER.size] + struct.pack("<i", -1) + i[HEADER.size + 4:], b), "negative length")
        broken(lambda i, b: (i[:doc0] + struct.pack("<q", 1) + i[doc0 + 8:], b), "start at 1")
        broken(lambda i, b: (i[:doc0 + 8] + struct.pack("<q", 5) + i[doc0 + 16:], b), "is below")
        broken(lambda i, b: (i[:-8] + struct.pack("<q", 3), b), "end at 3")
        os.remove(p + ".bin")
        try:
            read_dataset(p)
            raise AssertionError("accepted a missing .bin")
        except FormatError as e:
            assert "no such file" in str(e)
    print("read_megatron self-test passed")


def main():
    ap = argparse.ArgumentParser(description="Read a Megatron-LM indexed dataset and print it as JSON.")
    ap.add_argument("prefix", nargs="?", help="dataset path without .idx/.bin")
    ap.add_argument("--max", type=int, metavar="N", help="print only the first N sequences")
    ap.add_argument("--self-test", action="store_true", help="run the built-in checks")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    if not args.prefix:
        ap.error("PREFIX is required")
    if args.max is not None and args.max < 0:
        ap.error("--max must be >= 0")
    try:
        result = read_dataset(args.prefix, args.max)
    except FormatError as e:
        print("read_megatron: %s" % e, file=sys.stderr)
        sys.exit(1)
    except OSError as e:
        print("read_megatron: %s" % e, file=sys.stderr)
        sys.exit(1)
    json.dump(result, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
