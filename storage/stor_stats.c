// SPDX-License-Identifier: Apache-2.0
/*
 * stor_stats: the store's counters (stor_get_stats, stor_db.h) and its
 * metric families for /metrics (stor_db_metrics_render), which the HTTP room
 * joins into the exposition; names and labels are what dashboards read.
 */
#include "storage/stor_db.h"
#include "storage/stor_db_impl.h"

#include <pthread.h>

#include "base/base_expo.h"

void stor_get_stats(stor_db *db, stor_stats *out)
{
	pthread_mutex_lock(&db->mu);
	out->bytes = db->bytes;
	out->max_bytes = db->max_bytes;
	out->entries = db->stored_entries;
	out->files = db->files;
	out->indexes = db->indexes;
	out->evictions = db->evictions;
	out->pinned = db->pinned;
	out->negatives = db->stored_entries - db->files;
	out->max_negative = db->max_negative;
	pthread_mutex_unlock(&db->mu);
}

void stor_db_metrics_render(stor_db *db, base_buf *out)
{
	stor_stats ss;
	stor_get_stats(db, &ss);
	base_expo_family(out, "symbolizer_store_bytes", "gauge",
			 "Logical size of everything in the store.");
	base_expo_u64(out, "symbolizer_store_bytes", "", ss.bytes);
	base_expo_family(out, "symbolizer_store_max_bytes", "gauge", "Bound of the store (0: none).");
	base_expo_u64(out, "symbolizer_store_max_bytes", "", ss.max_bytes);
	base_expo_family(out, "symbolizer_store_entries", "gauge",
			 "Build IDs with a record in the store.");
	base_expo_u64(out, "symbolizer_store_entries", "", ss.entries);
	base_expo_family(out, "symbolizer_store_indexes", "gauge", "Build IDs with a stored index.");
	base_expo_u64(out, "symbolizer_store_indexes", "", ss.indexes);
	base_expo_family(out, "symbolizer_store_evictions_total", "counter",
			 "Store entries evicted to stay under the bound.");
	base_expo_u64(out, "symbolizer_store_evictions_total", "", ss.evictions);
	base_expo_family(out, "symbolizer_store_negative_entries", "gauge",
			 "Negative records (not found, error, too large) in the store "
			 "(bound: --negative-cache-entries).");
	base_expo_u64(out, "symbolizer_store_negative_entries", "", ss.negatives);
	pthread_mutex_lock(&db->mu);
	bool full = db->disk_full || db->read_only;
	uint64_t errors = db->write_errors, refused = db->space_refused;
	pthread_mutex_unlock(&db->mu);
	base_expo_family(out, "symbolizer_store_disk_full", "gauge",
			 "1 while the store's disk is full: writes refused, reads served.");
	base_expo_u64(out, "symbolizer_store_disk_full", "", full);
	base_expo_family(out, "symbolizer_store_write_errors_total", "counter",
			 "Store writes that failed or were refused (a full disk, I/O errors).");
	base_expo_u64(out, "symbolizer_store_write_errors_total", "", errors);
	base_expo_family(out, "symbolizer_store_space_refused_total", "counter",
			 "Writes refused because the disk could not take them whole (twice their "
			 "size: the WAL, then the flushed file); the store stays writable.");
	base_expo_u64(out, "symbolizer_store_space_refused_total", "", refused);
	base_expo_family(out, "symbolizer_store_disk_bytes", "gauge",
			 "Bytes the data dir takes on disk (du: WAL and files not yet collected too).");
	base_expo_u64(out, "symbolizer_store_disk_bytes", "", stor_space_disk_bytes(db));
}
