// A small driver for real LevelDB, used by tests/tests/leveldb_interop.rs.
//
//   leveldb_helper create DIR        create an empty database, close it
//   leveldb_helper write DIR SPEC    apply the batches in SPEC to the database in DIR
//                                    (created if missing), then close it without
//                                    compacting: the write-ahead log keeps every batch
//   leveldb_helper read DIR OUT      open DIR with paranoid_checks = true and write every
//                                    key and value to OUT
//   leveldb_helper dump LOG OUT      read the log file LOG with LevelDB's own log reader
//                                    (checksums verified, through leveldb::DumpFile) and
//                                    write its text to OUT: per record a line
//                                    `--- offset N; sequence S` and its operations, per
//                                    corruption the reader reports a line `corruption: ...`
//
// SPEC: batches, each a u32 op count, then per op a u8 tag (1 put, 0 delete), a u32 key
// length and the key, and for a put a u32 value length and the value. OUT: per entry a u32
// key length, the key, a u32 value length, the value. Integers are little-endian.
// Exit status 0 on success; 1 with LevelDB's status on standard error otherwise.

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <leveldb/db.h>
#include <leveldb/dumpfile.h>
#include <leveldb/env.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

namespace {

int fail(const std::string& what, const leveldb::Status& status) {
    std::cerr << "leveldb_helper: " << what << ": " << status.ToString() << "\n";
    return 1;
}

int usage() {
    std::cerr << "usage: leveldb_helper create DIR | write DIR SPEC | read DIR OUT | dump LOG OUT\n";
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

leveldb::Options options() {
    leveldb::Options options;
    options.create_if_missing = true;
    // Large enough that the memtable is never flushed: the log keeps every batch.
    options.write_buffer_size = 256 << 20;
    return options;
}

int create(const std::string& dir) {
    leveldb::DB* db = nullptr;
    leveldb::Status s = leveldb::DB::Open(options(), dir, &db);
    if (!s.ok()) return fail("open " + dir, s);
    delete db;
    return 0;
}

int write(const std::string& dir, const std::string& spec) {
    std::ifstream file(spec, std::ios::binary);
    if (!file) {
        std::cerr << "leveldb_helper: cannot read " << spec << "\n";
        return 1;
    }
    Input in(std::vector<char>(std::istreambuf_iterator<char>(file), {}));
    leveldb::DB* db = nullptr;
    leveldb::Status s = leveldb::DB::Open(options(), dir, &db);
    if (!s.ok()) return fail("open " + dir, s);
    std::unique_ptr<leveldb::DB> owned(db);
    while (!in.done()) {
        uint32_t count;
        if (!in.u32(&count)) return usage();
        leveldb::WriteBatch batch;
        for (uint32_t i = 0; i < count; i++) {
            uint8_t tag;
            std::string key, value;
            if (!in.u8(&tag) || !in.bytes(&key)) return usage();
            if (tag == 1) {
                if (!in.bytes(&value)) return usage();
                batch.Put(key, value);
            } else {
                batch.Delete(key);
            }
        }
        s = db->Write(leveldb::WriteOptions(), &batch);
        if (!s.ok()) return fail("write", s);
    }
    return 0;
}

int read(const std::string& dir, const std::string& out_path) {
    leveldb::Options opts;
    opts.create_if_missing = false;
    opts.paranoid_checks = true;
    opts.write_buffer_size = 256 << 20;
    leveldb::DB* db = nullptr;
    leveldb::Status s = leveldb::DB::Open(opts, dir, &db);
    if (!s.ok()) return fail("open " + dir + " with paranoid_checks", s);
    std::unique_ptr<leveldb::DB> owned(db);
    leveldb::ReadOptions read_options;
    read_options.verify_checksums = true;
    std::unique_ptr<leveldb::Iterator> it(db->NewIterator(read_options));
    std::string out;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
        put_u32(&out, uint32_t(it->key().size()));
        out.append(it->key().data(), it->key().size());
        put_u32(&out, uint32_t(it->value().size()));
        out.append(it->value().data(), it->value().size());
    }
    if (!it->status().ok()) return fail("iterate", it->status());
    std::ofstream file(out_path, std::ios::binary);
    file.write(out.data(), std::streamsize(out.size()));
    if (!file) {
        std::cerr << "leveldb_helper: cannot write " << out_path << "\n";
        return 1;
    }
    return 0;
}

int dump(const std::string& log, const std::string& out_path) {
    leveldb::Env* env = leveldb::Env::Default();
    leveldb::WritableFile* out = nullptr;
    leveldb::Status s = env->NewWritableFile(out_path, &out);
    if (!s.ok()) return fail("create " + out_path, s);
    std::unique_ptr<leveldb::WritableFile> owned(out);
    s = leveldb::DumpFile(env, log, out);
    if (!s.ok()) return fail("dump " + log, s);
    s = out->Close();
    if (!s.ok()) return fail("close " + out_path, s);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 2 && args[0] == "create") return create(args[1]);
    if (args.size() == 3 && args[0] == "write") return write(args[1], args[2]);
    if (args.size() == 3 && args[0] == "read") return read(args[1], args[2]);
    if (args.size() == 3 && args[0] == "dump") return dump(args[1], args[2]);
    return usage();
}
