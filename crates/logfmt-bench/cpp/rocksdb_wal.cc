// RocksDB's side of `cargo xtask bench wal`: threads writing to one database with
// `WriteOptions::sync = true` (each Put returns once its WAL record is durable, RocksDB's group
// commit batching the threads' writes into one WAL write and one sync), the WAL switched every
// 64 MiB (`write_buffer_size`: a memtable switch starts a new WAL), in a fresh WAL file or in a
// recycled one (`recycle_log_file_num`).
//
//   rocksdb_wal DIR SECONDS RECORD fresh|recycled THREADS [THREADS ...]
//
// Before each case, 64 MiB are written unsynced and flushed twice: the WAL then written is a
// new file (fresh) or, with `recycle_log_file_num = 4`, the first WAL's file reused (recycled):
// both cases run after the same preparation. One line per thread count:
//   WAL impl=rocksdb files=MODE threads=N record=SIZE appends_per_s=F syncs=N appends=N seconds=F reused=0|1
// `reused` says whether the WAL written was a recycled file (it was longer than zero bytes
// before the case). `syncs` is RocksDB's count of WAL syncs (WAL_FILE_SYNCED).

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

// The newest WAL file in `path` and its length.
static std::pair<std::string, uintmax_t> newest_wal(const std::string& path) {
  std::pair<std::string, uintmax_t> newest{"", 0};
  for (const auto& entry : fs::directory_iterator(path)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.substr(name.size() - 4) == ".log" && name > newest.first) {
      newest = {name, entry.file_size()};
    }
  }
  return newest;
}

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: rocksdb_wal DIR SECONDS RECORD fresh|recycled THREADS [THREADS ...]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const double seconds = std::atof(argv[2]);
  const size_t record = static_cast<size_t>(std::atol(argv[3]));
  const std::string mode = argv[4];
  const bool recycled = mode == "recycled";
  for (int a = 5; a < argc; a++) {
    const int threads = std::atoi(argv[a]);
    const std::string path = dir + "/rocksdb-wal-" + mode + "-" + std::to_string(threads);
    rocksdb::Options options;
    rocksdb::DestroyDB(path, options);
    options.create_if_missing = true;
    options.statistics = rocksdb::CreateDBStatistics();
    options.write_buffer_size = 64ull << 20;
    options.recycle_log_file_num = recycled ? 4 : 0;
    // RocksDB 7.8 turns recycling off in every recovery mode but kSkipAnyCorruptedRecords
    // (its SanitizeOptions): that mode, in both cases alike (recovery is not measured).
    options.wal_recovery_mode = rocksdb::WALRecoveryMode::kSkipAnyCorruptedRecords;
    rocksdb::DB* db = nullptr;
    rocksdb::Status status = rocksdb::DB::Open(options, path, &db);
    if (!status.ok()) {
      std::fprintf(stderr, "rocksdb_wal: open %s: %s\n", path.c_str(), status.ToString().c_str());
      return 1;
    }
    // The same preparation in both modes: 64 MiB unsynced, a switch, a flush, a switch.
    {
      rocksdb::WriteOptions unsynced;
      const std::string big(1 << 20, 'p');
      for (int i = 0; i < 63 && status.ok(); i++) {
        status = db->Put(unsynced, "prefill" + std::to_string(i), big);
      }
      rocksdb::FlushOptions flush;
      flush.wait = true;
      if (status.ok()) status = db->Flush(flush);
      if (status.ok()) status = db->Put(unsynced, "between", "x");
      if (status.ok()) status = db->Flush(flush);
      if (!status.ok()) {
        std::fprintf(stderr, "rocksdb_wal: prepare: %s\n", status.ToString().c_str());
        return 1;
      }
    }
    const bool reused = newest_wal(path).second > 0;
    const unsigned long long syncs_before =
        options.statistics->getTickerCount(rocksdb::WAL_FILE_SYNCED);
    std::atomic<bool> stop{false};
    std::atomic<bool> failed{false};
    std::atomic<unsigned long long> appends{0};
    const auto started = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; t++) {
      workers.emplace_back([&, t] {
        rocksdb::WriteOptions write;
        write.sync = true;
        const std::string value(record, static_cast<char>(t));
        unsigned long long i = 0;
        char key[17];
        while (!stop.load(std::memory_order_relaxed)) {
          std::snprintf(key, sizeof key, "%04d%012llu", t, i++);
          rocksdb::Status s = db->Put(write, rocksdb::Slice(key, 16), value);
          if (!s.ok()) {
            std::fprintf(stderr, "rocksdb_wal: put: %s\n", s.ToString().c_str());
            failed = true;
            return;
          }
          appends.fetch_add(1, std::memory_order_relaxed);
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto& worker : workers) worker.join();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const unsigned long long syncs =
        options.statistics->getTickerCount(rocksdb::WAL_FILE_SYNCED) - syncs_before;
    delete db;
    rocksdb::DestroyDB(path, options);
    if (failed) return 1;
    std::printf(
        "WAL impl=rocksdb files=%s threads=%d record=%zu appends_per_s=%.1f syncs=%llu "
        "appends=%llu seconds=%.3f reused=%d\n",
        mode.c_str(), threads, record, static_cast<double>(appends.load()) / elapsed, syncs,
        appends.load(), elapsed, reused ? 1 : 0);
    std::fflush(stdout);
  }
  return 0;
}
