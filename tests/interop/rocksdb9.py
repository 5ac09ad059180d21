"""A small driver for RocksDB 9 (the one PyPI's `rocksdict` bundles), used by
tests/tests/rocksdb9_interop.rs. The same commands, input and output as rocksdb_wal_writer.cc:

  rocksdb9.py version
      Prints `rocksdb VERSION` (from the LOG of a scratch database).
  rocksdb9.py write DIR SPEC crash|close
      Opens (creates) the database in DIR with the DBOptions of LOGFMT_ROCKSDB_OPTIONS
      (`name=value;...`, as RocksDB's OPTIONS file spells them), applies the batches of SPEC
      phase by phase with a flush between phases, syncs the WAL, then either ends the process
      without closing the database (`crash`) or closes it (`close`).
  rocksdb9.py read DIR OUT [MODE]
      Opens the database in DIR with the options it was written with (and the WAL recovery
      mode MODE: absolute, the default, or point-in-time) and writes every key and value to OUT.

SPEC: a u32 phase count; per phase a u32 batch count; per batch a u32 op count, then per op a u8
tag (1 put, 0 delete), a u32 key length and the key, and for a put a u32 value length and the
value. OUT: per entry a u32 key length, the key, a u32 value length, the value. Integers are
little-endian.

`write` prints, one line each:
  options NAME=VALUE ...                     the DBOptions RocksDB kept (from its OPTIONS file)
  batch PHASE LOG_NUMBER SEQUENCE COUNT      for every batch, in order
  wal PHASE LOG_NUMBER                       the log each phase was written to
"""

import os
import re
import struct
import sys
import tempfile

import rocksdict

# The DBOptions `write` reports from the OPTIONS file RocksDB wrote.
REPORTED = (
    "wal_compression",
    "track_and_verify_wals_in_manifest",
    "recycle_log_file_num",
    "wal_recovery_mode",
)


def options_file(db):
    names = [n for n in os.listdir(db) if n.startswith("OPTIONS-")]
    return os.path.join(db, max(names, key=lambda n: int(n.split("-")[1])))


def set_db_options(db, settings):
    """Rewrites the latest OPTIONS file of `db` with `settings` in its [DBOptions] section."""
    path = options_file(db)
    with open(path) as f:
        lines = f.read().split("\n")
    section = None
    out = []
    for line in lines:
        header = re.match(r"\s*\[(\w+)", line)
        if header:
            section = header.group(1)
        name = line.strip().split("=", 1)[0]
        if section == "DBOptions" and name in settings:
            line = "  %s=%s" % (name, settings.pop(name))
        out.append(line)
    if settings:
        # Names the file did not have: added to its [DBOptions].
        at = next(i for i, l in enumerate(out) if l.strip().startswith("[DBOptions"))
        for name, value in settings.items():
            out.insert(at + 1, "  %s=%s" % (name, value))
    with open(path, "w") as f:
        f.write("\n".join(out))


def kept_options(db):
    kept = {}
    section = None
    with open(options_file(db)) as f:
        for line in f:
            header = re.match(r"\s*\[(\w+)", line)
            if header:
                section = header.group(1)
            name, _, value = line.strip().partition("=")
            if section == "DBOptions" and name in REPORTED:
                kept[name] = value
    return kept


def open_db(db, mode=None):
    options, columns = rocksdict.Options.load_latest(db)
    if mode == "absolute":
        options.set_wal_recovery_mode(rocksdict.DBRecoveryMode.absolute_consistency())
    elif mode == "point-in-time":
        options.set_wal_recovery_mode(rocksdict.DBRecoveryMode.point_in_time())
    elif mode is not None:
        raise SystemExit(2)
    return rocksdict.Rdict(db, options, column_families=columns)


def current_log(db):
    numbers = [int(n[:-4]) for n in os.listdir(db) if n.endswith(".log")]
    return max(numbers)


class Input:
    def __init__(self, data):
        self.data, self.at = data, 0

    def u32(self):
        (value,) = struct.unpack_from("<I", self.data, self.at)
        self.at += 4
        return value

    def u8(self):
        self.at += 1
        return self.data[self.at - 1]

    def bytes(self):
        n = self.u32()
        self.at += n
        return self.data[self.at - n : self.at]


def write(db, spec_path, ending):
    settings = {}
    for item in filter(None, os.environ.get("LOGFMT_ROCKSDB_OPTIONS", "").split(";")):
        name, _, value = item.partition("=")
        settings[name.strip()] = value.strip()
    # Created first with rocksdict's defaults (raw bytes, no pickling), closed, then its
    # OPTIONS file given the settings, and opened with them.
    options = rocksdict.Options(raw_mode=True)
    options.create_if_missing(True)
    rocksdict.Rdict(db, options).close()
    set_db_options(db, settings)
    rdict = open_db(db)
    print("options " + " ".join("%s=%s" % kv for kv in sorted(kept_options(db).items())))
    with open(spec_path, "rb") as f:
        spec = Input(f.read())
    phases = spec.u32()
    for phase in range(phases):
        lines = []
        for _ in range(spec.u32()):
            batch = rocksdict.WriteBatch(raw_mode=True)
            count = spec.u32()
            for _ in range(count):
                if spec.u8() == 1:
                    key = spec.bytes()
                    batch.put(key, spec.bytes())
                else:
                    batch.delete(spec.bytes())
            sequence = rdict.latest_sequence_number() + 1
            rdict.write(batch)
            lines.append((sequence, count))
        log = current_log(db)
        for sequence, count in lines:
            print("batch %d %d %d %d" % (phase, log, sequence, count))
        print("wal %d %d" % (phase, log))
        if phase + 1 < phases:
            rdict.flush(True)
    rdict.flush_wal(True)
    sys.stdout.flush()
    if ending == "crash":
        # No close: the logs are left as a crash leaves them.
        os._exit(0)
    rdict.close()


def read(db, out_path, mode):
    rdict = open_db(db, mode)
    with open(out_path, "wb") as f:
        for key, value in rdict.items():
            f.write(struct.pack("<I", len(key)) + key + struct.pack("<I", len(value)) + value)
    rdict.close()


def version():
    with tempfile.TemporaryDirectory() as scratch:
        options = rocksdict.Options(raw_mode=True)
        options.create_if_missing(True)
        rocksdict.Rdict(scratch, options).close()
        with open(os.path.join(scratch, "LOG")) as f:
            found = re.search(r"RocksDB version: (\S+)", f.read())
    print("rocksdb " + found.group(1))


def main(argv):
    if argv[1:2] == ["version"] and len(argv) == 2:
        return version()
    if argv[1:2] == ["write"] and len(argv) == 5 and argv[4] in ("crash", "close"):
        return write(argv[2], argv[3], argv[4])
    if argv[1:2] == ["read"] and len(argv) in (4, 5):
        return read(argv[2], argv[3], argv[4] if len(argv) == 5 else "absolute")
    sys.stderr.write("usage: rocksdb9.py version | write DIR SPEC crash|close | read DIR OUT [MODE]\n")
    raise SystemExit(2)


if __name__ == "__main__":
    main(sys.argv)
