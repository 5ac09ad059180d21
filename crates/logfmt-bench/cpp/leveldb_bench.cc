// leveldb-bench: LevelDB's own C++ log::Writer and log::Reader in logfmt-bench's side-by-side
// protocol (`--name NAME --reps K SIZE:COUNT ...`, the same payloads, `DIGEST` and `RESULT`
// lines), so `cargo xtask bench` can measure both in one run.
//
// The writer and reader are LevelDB 1.23's object code from Debian's libleveldb.a (built -O2).
// Their headers are not installed, so the two classes are declared here as db/log_writer.h and
// db/log_reader.h declare them (members sized generously: only LevelDB's code touches them).
// LevelDB built with google/crc32c calls crc32c::Extend for its checksums; Debian builds it
// without, so this file defines leveldb::crc32c::Extend with the SSE 4.2 crc32 instruction in
// three interleaved streams, as google/crc32c does (the linker takes it before the archive's
// table-driven one). Files are in memory: the writer appends to a pre-faulted buffer, the reader
// returns slices of the log without copying (as logfmt's reader of a slice does); with `--copy`,
// each block the reader asks for is copied into its buffer first, as reading a file does.

#include <nmmintrin.h>
#include <wmmintrin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "leveldb/env.h"
#include "leveldb/slice.h"
#include "leveldb/status.h"

namespace leveldb {
namespace crc32c {
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);
}  // namespace crc32c

namespace log {

class Writer {
 public:
  explicit Writer(WritableFile* dest);
  ~Writer();
  Status AddRecord(const Slice& slice);

 private:
  WritableFile* dest_;
  int block_offset_;
  uint32_t type_crc_[5];
  char spare_[64];
};

class Reader {
 public:
  class Reporter {
   public:
    virtual ~Reporter();
    virtual void Corruption(size_t bytes, const Status& status) = 0;
  };
  Reader(SequentialFile* file, Reporter* reporter, bool checksum, uint64_t initial_offset);
  ~Reader();
  bool ReadRecord(Slice* record, std::string* scratch);

 private:
  char fields_[256];
};

}  // namespace log

namespace crc32c {
namespace {

// x^n mod P on CRC registers (reflected; the register 1 is x^31).
uint32_t TimesX(uint32_t r, size_t n) {
  for (size_t i = 0; i < n; i++) r = (r >> 1) ^ ((r & 1) ? 0x82f63b78u : 0);
  return r;
}

constexpr size_t kStreamWords = 4096 / 24;

struct Shifts {
  uint32_t one[kStreamWords + 1];
  uint32_t two[kStreamWords + 1];
  Shifts() {
    uint32_t a = 1, b = TimesX(1, 64);
    for (size_t w = 1; w <= kStreamWords; w++) {
      one[w] = a;
      two[w] = b;
      a = TimesX(a, 64);
      b = TimesX(b, 128);
    }
  }
};

const Shifts kShifts;

uint64_t Times(uint64_t r, uint32_t k) {
  __m128i p = _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<int64_t>(r)),
                                   _mm_cvtsi64_si128(static_cast<int64_t>(k)), 0);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(p));
}

uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

uint32_t Extend(uint32_t init_crc, const char* data, size_t n) {
  uint64_t state = ~init_crc;
  while (n >= 72) {
    size_t words = n / 24;
    if (words > kStreamWords) words = kStreamWords;
    const char* a = data;
    const char* b = data + words * 8;
    const char* c = data + words * 16;
    uint64_t x = state, y = 0, z = 0;
    for (size_t i = 0; i < words; i++) {
      x = _mm_crc32_u64(x, Load64(a + 8 * i));
      y = _mm_crc32_u64(y, Load64(b + 8 * i));
      z = _mm_crc32_u64(z, Load64(c + 8 * i));
    }
    state = _mm_crc32_u64(0, Times(x, kShifts.two[words]) ^ Times(y, kShifts.one[words])) ^ z;
    data += words * 24;
    n -= words * 24;
  }
  for (; n >= 8; n -= 8, data += 8) state = _mm_crc32_u64(state, Load64(data));
  uint32_t s = static_cast<uint32_t>(state);
  for (; n > 0; n--, data++) s = _mm_crc32_u8(s, static_cast<uint8_t>(*data));
  return ~s;
}

}  // namespace crc32c
}  // namespace leveldb

namespace {

using leveldb::Slice;
using leveldb::Status;

class MemoryFile : public leveldb::WritableFile {
 public:
  explicit MemoryFile(std::vector<char>* buffer) : buffer_(buffer) {}
  Status Append(const Slice& data) override {
    if (len_ + data.size() > buffer_->size()) return Status::IOError("log buffer full");
    std::memcpy(buffer_->data() + len_, data.data(), data.size());
    len_ += data.size();
    return Status::OK();
  }
  Status Close() override { return Status::OK(); }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  size_t len() const { return len_; }

 private:
  std::vector<char>* buffer_;
  size_t len_ = 0;
};

// The log in memory. Zero-copy (the default): `Read` returns a slice of the log, as logfmt's
// reader of a slice reads it. With `copy`, `Read` copies the bytes into the reader's buffer
// (`scratch`, its 32 KiB block buffer) and returns that, as a file's read(2) does: LevelDB's
// reader as it reads a log file, without the system call.
class MemorySource : public leveldb::SequentialFile {
 public:
  MemorySource(const char* data, size_t len, bool copy) : data_(data), len_(len), copy_(copy) {}
  Status Read(size_t n, Slice* result, char* scratch) override {
    size_t k = n < len_ - pos_ ? n : len_ - pos_;
    if (copy_) {
      std::memcpy(scratch, data_ + pos_, k);
      *result = Slice(scratch, k);
    } else {
      *result = Slice(data_ + pos_, k);
    }
    pos_ += k;
    return Status::OK();
  }
  Status Skip(uint64_t n) override {
    pos_ = n < len_ - pos_ ? pos_ + n : len_;
    return Status::OK();
  }

 private:
  const char* data_;
  size_t len_;
  bool copy_;
  size_t pos_ = 0;
};

class CountingReporter : public leveldb::log::Reader::Reporter {
 public:
  void Corruption(size_t, const Status&) override { corruptions++; }
  size_t corruptions = 0;
};

constexpr size_t kSourceLen = 2 << 20;
constexpr size_t kWindow = 1 << 20;

struct Case {
  size_t size, count;
};

struct Bench {
  const std::vector<char>& src;
  Case c;
  std::vector<char> log;
  size_t log_len = 0;
  std::string scratch;
  bool copy;

  Bench(const std::vector<char>& s, Case cs, bool cp) : src(s), c(cs), copy(cp) {
    size_t payload = c.size * c.count;
    size_t bytes = payload + c.count * 7 + (payload / 32768 + 2) * 14 + 32768;
    log.assign(bytes, 1);  // pre-faulted
  }
  const char* Record(size_t i) const { return src.data() + (i * 997) % kWindow; }

  size_t Write() {
    MemoryFile file(&log);
    leveldb::log::Writer writer(&file);
    for (size_t i = 0; i < c.count; i++) {
      if (!writer.AddRecord(Slice(Record(i), c.size)).ok()) break;
    }
    log_len = file.len();
    return log_len;
  }

  // Reads every record; returns the payload bytes (and chains their CRC-32C if asked).
  size_t Read(uint32_t* chained, size_t* records, bool* same) {
    MemorySource source(log.data(), log_len, copy);
    CountingReporter reporter;
    leveldb::log::Reader reader(&source, &reporter, true, 0);
    Slice record;
    size_t bytes = 0, n = 0;
    while (reader.ReadRecord(&record, &scratch)) {
      bytes += record.size();
      if (chained) {
        *chained = leveldb::crc32c::Extend(*chained, record.data(), record.size());
        if (record.size() != c.size || std::memcmp(record.data(), Record(n), c.size) != 0)
          *same = false;
      }
      n++;
    }
    if (records) *records = n;
    if (reporter.corruptions && same) *same = false;
    return bytes;
  }
};

volatile size_t sink;

}  // namespace

int main(int argc, char** argv) {
  std::string name = "leveldb";
  int reps = 5;
  bool copy = false;
  std::vector<Case> cases;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--name" && i + 1 < argc) {
      name = argv[++i];
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--copy") {
      copy = true;
    } else {
      size_t size = 0, count = 0;
      if (std::sscanf(a.c_str(), "%zu:%zu", &size, &count) != 2 || size > kWindow) {
        std::fprintf(stderr, "usage: leveldb-bench --name NAME --reps K [--copy] SIZE:COUNT ...\n");
        return 2;
      }
      cases.push_back({size, count});
    }
  }
  if (cases.empty()) cases = {{16, 2000000}, {100, 1000000}, {1024, 131072}, {32768, 4096},
                              {1048576, 128}};
  std::vector<char> src(kSourceLen);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < kSourceLen; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(src.data() + i, &x, 8);  // little-endian hosts
  }
  for (const Case& c : cases) {
    Bench bench(src, c, copy);
    bench.Write();
    uint32_t chained = 0;
    size_t records = 0;
    bool same = true;
    bench.Read(&chained, &records, &same);
    if (records != c.count || !same) {
      std::fprintf(stderr, "leveldb-bench: size %zu: round trip failed (%zu records)\n", c.size,
                   records);
      return 1;
    }
    std::printf("DIGEST impl=%s size=%zu records=%zu log_bytes=%zu log_crc32c=%08x payload_crc32c=%08x\n",
                name.c_str(), c.size, c.count, bench.log_len,
                leveldb::crc32c::Extend(0, bench.log.data(), bench.log_len), chained);
    for (int op = 0; op < 2; op++) {
      for (int r = 0; r < reps; r++) {
        auto start = std::chrono::steady_clock::now();
        size_t log_bytes = op == 0 ? bench.Write() : (sink = bench.Read(nullptr, nullptr, nullptr), bench.log_len);
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - start).count();
        std::printf("RESULT impl=%s op=%s size=%zu records=%zu payload_bytes=%zu log_bytes=%zu ns=%lld\n",
                    name.c_str(), op == 0 ? "write" : "read", c.size, c.count, c.size * c.count,
                    log_bytes, static_cast<long long>(ns));
      }
    }
    std::fflush(stdout);
  }
  return 0;
}
