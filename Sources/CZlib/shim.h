// zlib for gzip-compressed imports (RecordLog's Gzip.swift).
#include <zlib.h>
