// SPDX-License-Identifier: Apache-2.0
/*
 * stor_rocks_shim: the two things the store needs from RocksDB that its C API
 * (Debian 12's 7.8) lacks, in C++ behind C functions (stor_db_impl.h):
 *
 * - its info log routed to ours (base_log, warnings and worse): RocksDB's own
 *   LOG file in the data dir hit ENOSPC on a full disk and an assertion in
 *   librocksdb aborted the daemon, at every restart too;
 * - no fallocate: preallocated WAL blocks took the disk before any write;
 * - DB::Resume(), which lifts the stop on writes that a failed write (a full
 *   disk) leaves behind, once space is back.
 *
 * rocksdb_options_t and rocksdb_t are `struct { Options rep; }` and
 * `struct { DB* rep; }` in RocksDB's c.cc (unchanged since the C API began);
 * the casts below rely on that.
 */
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <rocksdb/c.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>

extern "C" {
#include "base/base_log.h"
#include "storage/stor_shim.h"
}

namespace {

struct options_layout {
	rocksdb::Options rep;
};
struct db_layout {
	rocksdb::DB *rep;
};

class stor_logger : public rocksdb::Logger {
public:
	stor_logger() : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL) {}
	using rocksdb::Logger::Logv;
	void Logv(const char *format, va_list ap) override
	{
		Logv(rocksdb::InfoLogLevel::WARN_LEVEL, format, ap);
	}
	void Logv(const rocksdb::InfoLogLevel level, const char *format, va_list ap) override
	{
		if (level < GetInfoLogLevel() || level == rocksdb::InfoLogLevel::HEADER_LEVEL)
			return;
		char line[512], q[600];
		vsnprintf(line, sizeof(line), format, ap);
		base_logf(level >= rocksdb::InfoLogLevel::ERROR_LEVEL ? BASE_LOG_ERROR : BASE_LOG_WARN,
			  "rocksdb", "detail=%s", base_log_quote(q, sizeof(q), line));
	}
};

} // namespace

extern "C" void stor_shim_options(rocksdb_options_t *opts)
{
	rocksdb::Options &o = reinterpret_cast<options_layout *>(opts)->rep;
	/* One logger for the process, never freed: RocksDB's background threads
	 * (its Env's pool, shared by every DB) may still ask it for its level
	 * while the last options holding it go away. */
	static std::shared_ptr<rocksdb::Logger> *const logger =
		new std::shared_ptr<rocksdb::Logger>(std::make_shared<stor_logger>());
	o.info_log = *logger;
	/* fallocate'd WAL blocks (1.1 write buffers, 70 MB here) are disk
	 * taken before anything is written: on a small disk, all of it. */
	o.allow_fallocate = false;
}

extern "C" char *stor_shim_resume(rocksdb_t *db)
{
	rocksdb::Status s = reinterpret_cast<db_layout *>(db)->rep->Resume();
	return s.ok() ? nullptr : strdup(s.ToString().c_str());
}
