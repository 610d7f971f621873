#ifndef BECKON_CSQLITESETTINGS_H
#define BECKON_CSQLITESETTINGS_H

/// Applies Beckon's process-wide SQLite settings. They go through `sqlite3_config`, which is
/// variadic and so cannot be called from Swift. Returns SQLITE_OK (0), or SQLITE_MISUSE when
/// SQLite was already initialized in this process, which then keeps its defaults.
int beckon_sqlite_configure(void);

#endif
