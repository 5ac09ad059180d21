// How `tests/data/leveldb-db/` was made: a LevelDB 1.23 database with two puts, a batch of a
// put and a delete, and one more put, left in its write-ahead log (nothing compacted). Its
// CURRENT, MANIFEST-000002 and 000003.log are kept (LOCK and LOG are not).
//
//   g++ -O1 leveldb_db_sample.cc -o leveldb_db_sample -lleveldb && ./leveldb_db_sample db

#include <leveldb/db.h>
#include <leveldb/write_batch.h>
#include <cassert>
#include <cstdio>
int main(int argc, char** argv) {
  leveldb::Options o; o.create_if_missing = true;
  leveldb::DB* db; assert(leveldb::DB::Open(o, argv[1], &db).ok());
  leveldb::WriteOptions w;
  db->Put(w, "sensor/1", "21.5");
  db->Put(w, "sensor/2", "19.0");
  leveldb::WriteBatch b;
  b.Put("sensor/3", "22.1");
  b.Delete("sensor/2");
  db->Write(w, &b);
  db->Put(w, "name", "greenhouse");
  delete db;
  return 0;
}
