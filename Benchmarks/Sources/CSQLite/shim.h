// The SQLite C API (libsqlite3-dev), for qbench's SQLite peer.
#include <sqlite3.h>
