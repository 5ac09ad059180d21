// RocksDB's side of `cargo xtask bench durable`: threads writing to one database with
// `WriteOptions::sync = true` (each Put returns once its WAL record is durable; RocksDB's own
// group commit batches the threads' writes into one WAL write and one sync).
//
//   rocksdb_durable DIR SECONDS RECORD THREADS [THREADS ...]
//
// One line per thread count, as logfmt-bench's durable mode prints them:
//   DURABLE impl=rocksdb threads=N record=SIZE appends_per_s=F syncs=N appends=N seconds=F
// Each Put writes a 16-byte key and a SIZE-byte value (the WAL record is the WriteBatch around
// them: 12 bytes of header, a tag and two lengths more). `syncs` is RocksDB's own count of WAL
// syncs (the WAL_FILE_SYNCED ticker). The memtable is large enough that no flush runs during a
// case: only the WAL is measured.

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: rocksdb_durable DIR SECONDS RECORD THREADS [THREADS ...]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const double seconds = std::atof(argv[2]);
  const size_t record = static_cast<size_t>(std::atol(argv[3]));
  for (int a = 4; a < argc; a++) {
    const int threads = std::atoi(argv[a]);
    const std::string path = dir + "/rocksdb-durable-" + std::to_string(threads);
    rocksdb::Options options;
    rocksdb::DestroyDB(path, options);
    options.create_if_missing = true;
    options.statistics = rocksdb::CreateDBStatistics();
    options.write_buffer_size = 1024ull << 20;
    rocksdb::DB* db = nullptr;
    rocksdb::Status status = rocksdb::DB::Open(options, path, &db);
    if (!status.ok()) {
      std::fprintf(stderr, "rocksdb_durable: open %s: %s\n", path.c_str(), status.ToString().c_str());
      return 1;
    }
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
            std::fprintf(stderr, "rocksdb_durable: put: %s\n", s.ToString().c_str());
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
    const unsigned long long syncs = options.statistics->getTickerCount(rocksdb::WAL_FILE_SYNCED);
    delete db;
    rocksdb::DestroyDB(path, options);
    if (failed) return 1;
    std::printf(
        "DURABLE impl=rocksdb threads=%d record=%zu appends_per_s=%.1f syncs=%llu appends=%llu "
        "seconds=%.3f\n",
        threads, record, static_cast<double>(appends.load()) / elapsed, syncs, appends.load(),
        elapsed);
    std::fflush(stdout);
  }
  return 0;
}
