#include "CSQLiteSettings.h"
#include <sqlite3.h>

int beckon_sqlite_configure(void) {
    // No allocation statistics: with them every allocation SQLite makes takes one process-wide
    // mutex, which every connection's thread contends for (Debian's build also has no lookaside
    // allocator, so that is every small allocation). Beckon never reads them.
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
