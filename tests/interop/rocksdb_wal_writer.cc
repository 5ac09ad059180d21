// A small driver for real RocksDB, used by tests/tests/rocksdb_interop.rs.
//
//   wal_writer write DIR SPEC crash|close
//       Opens (creates) the database in DIR with recycle_log_file_num = 2, so that obsolete
//       write-ahead logs are reused, and applies the batches of SPEC phase by phase, with a
//       Flush() between phases: each flush makes the log of the phase before obsolete, and
//       the log after two flushes reuses (recycles) the first one's file. After the last
//       phase, `crash` ends the process without closing the database (as a crash would: the
//       recycled file keeps the bytes of its earlier use after the new records; RocksDB trims
//       them only when it closes a log); `close` closes the database without a flush.
//   wal_writer read DIR OUT [MODE]
//       Opens the database in DIR (paranoid checks, absolute consistency: any damage in a
//       log it recovers is an error) and writes every key and value to OUT. MODE names
//       another WAL recovery mode: point-in-time (RocksDB's default: recovery stops at the
//       first damage, and the records after it are lost), tolerate or skip.
//
// SPEC: a u32 phase count; per phase a u32 batch count; per batch a u32 op count, then per op
// a u8 tag (1 put, 0 delete), a u32 key length and the key, and for a put a u32 value length
// and the value. OUT: per entry a u32 key length, the key, a u32 value length, the value.
// Integers are little-endian.
//
// `write` prints, one line each:
//   options recycle_log_file_num N wal_recovery_mode M
//   batch PHASE LOG_NUMBER SEQUENCE COUNT      for every batch, in order
//   wal PHASE LOG_NUMBER                       the log each phase was written to
// With LOGFMT_WAL_COMPRESSION=zstd in the environment, the logs are written with RocksDB's WAL
// compression (DBOptions::wal_compression = kZSTD) and not recycled.
// Exit status 0 on success; 1 with RocksDB's status on standard error; 2 for usage.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/transaction_log.h>
#include <rocksdb/write_batch.h>

namespace {

int fail(const std::string& what, const rocksdb::Status& status) {
    std::cerr << "wal_writer: " << what << ": " << status.ToString() << "\n";
    return 1;
}

int usage() {
    std::cerr << "usage: wal_writer write DIR SPEC crash|close | read DIR OUT [MODE]\n";
    return 2;
}

class Input {
  public:
    explicit Input(std::vector<char> data) : data_(std::move(data)) {}
    bool done() const { return pos_ >= data_.size(); }
    bool u8(uint8_t* out) {
        if (pos_ + 1 > data_.size()) return false;
        *out = static_cast<uint8_t>(data_[pos_++]);
        return true;
    }
    bool u32(uint32_t* out) {
        if (pos_ + 4 > data_.size()) return false;
        uint32_t v = 0;
        for (int i = 0; i < 4; i++) v |= uint32_t(uint8_t(data_[pos_ + i])) << (8 * i);
        pos_ += 4;
        *out = v;
        return true;
    }
    bool bytes(std::string* out) {
        uint32_t len;
        if (!u32(&len) || pos_ + len > data_.size()) return false;
        out->assign(data_.data() + pos_, len);
        pos_ += len;
        return true;
    }

  private:
    std::vector<char> data_;
    size_t pos_ = 0;
};

void put_u32(std::string* out, uint32_t v) {
    for (int i = 0; i < 4; i++) out->push_back(char((v >> (8 * i)) & 0xff));
}

rocksdb::Options options() {
    rocksdb::Options options;
    options.create_if_missing = true;
    options.recycle_log_file_num = 2;
    // RocksDB 7.x turns recycling off (recycle_log_file_num = 0) under every other recovery
    // mode; `write` prints the options in force, and the test checks recycling is on.
    options.wal_recovery_mode = rocksdb::WALRecoveryMode::kSkipAnyCorruptedRecords;
    // Large enough that only the explicit flushes switch logs.
    options.write_buffer_size = 256 << 20;
    options.max_total_wal_size = 1 << 30;
    // LOGFMT_WAL_COMPRESSION=zstd: RocksDB's WAL compression (a SetCompressionType record,
    // then each record one zstd frame), in a log that is not recycled.
    const char* compression = std::getenv("LOGFMT_WAL_COMPRESSION");
    if (compression != nullptr && std::string(compression) == "zstd") {
        options.wal_compression = rocksdb::kZSTD;
        options.recycle_log_file_num = 0;
    }
    return options;
}

// For `read`: the strictest recovery, which fails on any damage in a log.
rocksdb::Options strict() {
    rocksdb::Options options;
    options.create_if_missing = false;
    options.paranoid_checks = true;
    options.wal_recovery_mode = rocksdb::WALRecoveryMode::kAbsoluteConsistency;
    return options;
}

int write(const std::string& dir, const std::string& spec_path, const std::string& mode) {
    std::ifstream file(spec_path, std::ios::binary);
    Input spec(std::vector<char>(std::istreambuf_iterator<char>(file), {}));
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options(), dir, &raw);
    if (!s.ok()) return fail("open " + dir, s);
    std::unique_ptr<rocksdb::DB> db(raw);
    rocksdb::DBOptions in_force = db->GetDBOptions();
    std::printf("options recycle_log_file_num %zu wal_recovery_mode %d\n",
                in_force.recycle_log_file_num, int(in_force.wal_recovery_mode));
    uint32_t phases;
    if (!spec.u32(&phases)) return usage();
    for (uint32_t phase = 0; phase < phases; phase++) {
        uint32_t batches;
        if (!spec.u32(&batches)) return usage();
        uint64_t log_number = 0;
        for (uint32_t b = 0; b < batches; b++) {
            uint32_t ops;
            if (!spec.u32(&ops)) return usage();
            rocksdb::WriteBatch batch;
            for (uint32_t i = 0; i < ops; i++) {
                uint8_t tag;
                std::string key, value;
                if (!spec.u8(&tag) || !spec.bytes(&key)) return usage();
                if (tag == 1) {
                    if (!spec.bytes(&value)) return usage();
                    batch.Put(key, value);
                } else {
                    batch.Delete(key);
                }
            }
            rocksdb::SequenceNumber sequence = db->GetLatestSequenceNumber() + 1;
            s = db->Write(rocksdb::WriteOptions(), &batch);
            if (!s.ok()) return fail("write", s);
            std::unique_ptr<rocksdb::LogFile> wal;
            s = db->GetCurrentWalFile(&wal);
            if (!s.ok()) return fail("current WAL", s);
            log_number = wal->LogNumber();
            std::printf("batch %u %llu %llu %u\n", phase, (unsigned long long)log_number,
                        (unsigned long long)sequence, batch.Count());
        }
        std::printf("wal %u %llu\n", phase, (unsigned long long)log_number);
        if (phase + 1 < phases) {
            s = db->Flush(rocksdb::FlushOptions());
            if (!s.ok()) return fail("flush", s);
        }
    }
    // Every batch is in the log file (written, and synced).
    s = db->FlushWAL(true);
    if (!s.ok()) return fail("sync WAL", s);
    std::fflush(stdout);
    if (mode == "crash") {
        // No destructor, no close: the logs are left as a crash leaves them.
        std::_Exit(0);
    }
    s = db->Close();
    if (!s.ok()) return fail("close", s);
    return 0;
}

int read(const std::string& dir, const std::string& out_path, const std::string& mode) {
    rocksdb::Options options = strict();
    if (mode == "point-in-time") {
        options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
    } else if (mode == "tolerate") {
        options.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
    } else if (mode == "skip") {
        options.wal_recovery_mode = rocksdb::WALRecoveryMode::kSkipAnyCorruptedRecords;
    } else if (mode != "absolute") {
        return usage();
    }
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options, dir, &raw);
    if (!s.ok()) return fail("open " + dir, s);
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string out;
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
        put_u32(&out, uint32_t(it->key().size()));
        out.append(it->key().data(), it->key().size());
        put_u32(&out, uint32_t(it->value().size()));
        out.append(it->value().data(), it->value().size());
    }
    if (!it->status().ok()) return fail("iterate", it->status());
    std::ofstream(out_path, std::ios::binary) << out;
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    std::string command = argv[1];
    if (command == "write" && argc == 5) return write(argv[2], argv[3], argv[4]);
    if (command == "read" && argc == 4) return read(argv[2], argv[3], "absolute");
    if (command == "read" && argc == 5) return read(argv[2], argv[3], argv[4]);
    return usage();
}
