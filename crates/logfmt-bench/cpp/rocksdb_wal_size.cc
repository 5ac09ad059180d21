// RocksDB's side of the WAL size comparison in `cargo xtask bench pack`: RocksDB writes the
// puts of a spec file (written by `logfmt-bench wal-size`), each its own WriteBatch, to a new
// database, plain or with its own WAL compression (`DBOptions::wal_compression = kZSTD`), and
// prints the size of the write-ahead log it wrote:
//
//   rocksdb_wal_size SPEC DIR plain|zstd
//   WALSIZE impl=rocksdb-<plain|zstd> puts=N bytes=B
//
// SPEC: per put a u32 key length, the key, a u32 value length, the value (little-endian). The
// memtable is large enough that RocksDB never switches logs: the database's one `.log` file
// holds every put. After the last put the log is synced and its size read; the process then
// ends without closing the database (a close would flush the memtable, not needed here).

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

bool u32(const std::vector<char>& data, size_t* pos, uint32_t* out) {
  if (*pos + 4 > data.size()) return false;
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= uint32_t(uint8_t(data[*pos + i])) << (8 * i);
  *pos += 4;
  *out = v;
  return true;
}

bool bytes(const std::vector<char>& data, size_t* pos, rocksdb::Slice* out) {
  uint32_t len;
  if (!u32(data, pos, &len) || *pos + len > data.size()) return false;
  *out = rocksdb::Slice(data.data() + *pos, len);
  *pos += len;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || (std::string(argv[3]) != "plain" && std::string(argv[3]) != "zstd")) {
    std::fprintf(stderr, "usage: rocksdb_wal_size SPEC DIR plain|zstd\n");
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  const std::vector<char> spec(std::istreambuf_iterator<char>(file), {});
  const std::string dir = argv[2];
  const bool zstd = std::string(argv[3]) == "zstd";
  rocksdb::Options options;
  rocksdb::DestroyDB(dir, options);
  options.create_if_missing = true;
  options.write_buffer_size = size_t(4) << 30;
  options.max_total_wal_size = uint64_t(8) << 30;
  if (zstd) options.wal_compression = rocksdb::kZSTD;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "rocksdb_wal_size: open %s: %s\n", dir.c_str(), s.ToString().c_str());
    return 1;
  }
  size_t pos = 0;
  uint64_t puts = 0;
  while (pos < spec.size()) {
    rocksdb::Slice key, value;
    if (!bytes(spec, &pos, &key) || !bytes(spec, &pos, &value)) {
      std::fprintf(stderr, "rocksdb_wal_size: %s: cut short after %llu puts\n", argv[1],
                   (unsigned long long)puts);
      return 1;
    }
    s = db->Put(rocksdb::WriteOptions(), key, value);
    if (!s.ok()) {
      std::fprintf(stderr, "rocksdb_wal_size: put: %s\n", s.ToString().c_str());
      return 1;
    }
    puts++;
  }
  s = db->FlushWAL(true);
  if (!s.ok()) {
    std::fprintf(stderr, "rocksdb_wal_size: sync WAL: %s\n", s.ToString().c_str());
    return 1;
  }
  uint64_t wal_bytes = 0;
  int logs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".log") {
      wal_bytes += entry.file_size();
      logs++;
    }
  }
  if (logs != 1) {
    std::fprintf(stderr, "rocksdb_wal_size: %d write-ahead logs in %s, not one\n", logs,
                 dir.c_str());
    return 1;
  }
  std::printf("WALSIZE impl=rocksdb-%s puts=%llu bytes=%llu\n", zstd ? "zstd" : "plain",
              (unsigned long long)puts, (unsigned long long)wal_bytes);
  std::fflush(stdout);
  std::_Exit(0);
}
