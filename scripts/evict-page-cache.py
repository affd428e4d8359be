#!/usr/bin/env python3
"""Drops files from the page cache, so that the next read of them comes from the disk.

    scripts/evict-page-cache.py PATH...

Each PATH is a file or a directory (every file under it). Each file is synced, then advised
POSIX_FADV_DONTNEED: its clean cached pages are dropped, other files' stay (unlike
/proc/sys/vm/drop_caches, which also evicts the binaries being measured). Used for the cold
open measurements of docs/benchmarks.md ("Scaling"): evict a container or an SQLite file, then
run `qbench probe`.
"""

import os
import sys


def files(root):
    if os.path.isfile(root):
        yield root
        return
    for d, _, names in os.walk(root):
        for n in names:
            yield os.path.join(d, n)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().split("\n\n")[1])
    for root in sys.argv[1:]:
        if not os.path.exists(root):
            sys.exit(f"evict-page-cache.py: {root}: no such file or directory")
        for p in files(root):
            fd = os.open(p, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


if __name__ == "__main__":
    main()
