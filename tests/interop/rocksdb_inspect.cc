// A driver for real RocksDB, used by tests/tests/inspect_interop.rs: a database whose
// write-ahead logs and MANIFEST hold every kind of operation RocksDB's public API writes.
//
//   rocksdb_inspect DIR
//       Creates a database in DIR with the column families "default", "one" and "two", a merge
//       operator (concatenation) and two-phase commit (a TransactionDB), then writes:
//         puts, deletes, single deletes, merges, range deletions in each column family, one
//         batch holding several of them, a prepared and committed transaction, a prepared
//         and rolled back transaction; flushes column family "two" (the MANIFEST records a
//         new table file, and a new log begins) and drops it; writes again; and closes the
//         database without flushing, so that every write stays in a live write-ahead log.
//
// Exit status 0 on success; 1 with RocksDB's status on standard error.

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/transaction.h>
#include <rocksdb/utilities/transaction_db.h>
#include <rocksdb/write_batch.h>

namespace {

class Concatenate : public rocksdb::AssociativeMergeOperator {
  public:
    bool Merge(const rocksdb::Slice&, const rocksdb::Slice* existing,
               const rocksdb::Slice& value, std::string* new_value,
               rocksdb::Logger*) const override {
        new_value->assign(existing ? existing->ToString() : std::string());
        new_value->append(value.data(), value.size());
        return true;
    }
    const char* Name() const override { return "Concatenate"; }
};

bool check(const char* what, const rocksdb::Status& status) {
    if (!status.ok()) {
        std::cerr << "rocksdb_inspect: " << what << ": " << status.ToString() << "\n";
    }
    return status.ok();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 || std::string(argv[1]) != "write") {
        std::cerr << "usage: rocksdb_inspect write DIR\n";
        return 2;
    }
    const std::string dir = argv[2];
    rocksdb::Options options;
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    options.merge_operator = std::make_shared<Concatenate>();
    rocksdb::ColumnFamilyOptions cf_options(options);
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, cf_options},
        {"one", cf_options},
        {"two", cf_options},
    };
    rocksdb::TransactionDBOptions txn_options;
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::TransactionDB* db = nullptr;
    if (!check("open", rocksdb::TransactionDB::Open(options, txn_options, dir, families,
                                                    &handles, &db))) {
        return 1;
    }
    rocksdb::WriteOptions write;
    bool ok = true;
    for (int cf = 0; cf < 3 && ok; cf++) {
        auto* h = handles[cf];
        const std::string n = std::to_string(cf);
        ok = check("put", db->Put(write, h, "key" + n, "value" + n)) &&
             check("put", db->Put(write, h, std::string("bin\x00\x1b\xff", 6) + n,
                                  std::string("\x01\x02\n", 3))) &&
             check("merge", db->Merge(write, h, "counter" + n, "+a")) &&
             check("merge", db->Merge(write, h, "counter" + n, "+b")) &&
             check("delete", db->Delete(write, h, "key" + n)) &&
             check("single delete", db->SingleDelete(write, h, "once" + n)) &&
             check("delete range", db->GetRootDB()->DeleteRange(write, h, "a" + n, "b" + n));
    }
    // One batch, several families and kinds.
    rocksdb::WriteBatch batch;
    ok = ok && check("batch", batch.Put(handles[1], "batched", "1")) &&
         check("batch", batch.Delete(handles[2], "batched")) &&
         check("batch", batch.Merge(handles[0], "counter0", "+c")) &&
         check("batch", batch.DeleteRange(handles[1], "x", "y")) &&
         check("batch", batch.PutLogData("log data is not applied")) &&
         check("write batch", db->GetRootDB()->Write(write, &batch));
    // Two-phase commit: one transaction committed, one rolled back.
    for (const char* name : {"txn-commit", "txn-rollback"}) {
        if (!ok) break;
        std::unique_ptr<rocksdb::Transaction> txn(db->BeginTransaction(write));
        ok = check("name", txn->SetName(name)) &&
             check("txn put", txn->Put(handles[0], std::string(name) + "-key", "t")) &&
             check("txn put", txn->Put(handles[1], std::string(name) + "-key", "u")) &&
             check("prepare", txn->Prepare()) &&
             check(name, std::string(name) == "txn-commit" ? txn->Commit() : txn->Rollback());
    }
    // A table file in the MANIFEST (column family "two" flushed: the log switches, and the
    // first log stays live for the others), then the column family dropped.
    ok = ok && check("flush", db->Flush(rocksdb::FlushOptions(), handles[2])) &&
         check("drop", db->DropColumnFamily(handles[2]));
    // What stays in the live log.
    ok = ok && check("put", db->Put(write, handles[0], "last", "in the log")) &&
         check("put", db->Put(write, handles[1], "last", "in the log too"));
    for (auto* h : handles) {
        db->DestroyColumnFamilyHandle(h);
    }
    delete db;
    return ok ? 0 : 1;
}
