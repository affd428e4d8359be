#!/usr/bin/env python3
"""Real data for `qbench --data`: the simplemaps World Cities Basic CSV as Web Services records.

    scripts/worldcities.py worldcities.csv OUT_DIR

Reads the CSV (columns city, city_ascii, lat, lng, country, iso2, iso3, admin_name, capital,
population, id — with or without its header row; a leading index column is skipped) and writes
OUT_DIR/cities.jsonl (one `City` record per row, Web Services JSON Lines) and
OUT_DIR/queries.jsonl: the queries an app over such data asks — two-field conjunctions, radius
searches around real cities, nearest-first pages, prefix and text searches, sorted ranges, deep
pages — with arguments taken from the data, so `qbench --data … --queries …` compares Cirrus and
SQLite on them. The data set is not in the repository (its licence is the publisher's); the
figures it gave are in docs/benchmarks.md.
"""
import csv
import json
import os
import sys

COLUMNS = ["city", "city_ascii", "lat", "lng", "country", "iso2", "iso3", "admin_name", "capital", "population", "id"]


def rows(path):
    with open(path, encoding="utf-8", newline="") as f:
        for i, row in enumerate(csv.reader(f)):
            if not row:
                continue
            if len(row) == len(COLUMNS) + 1:
                row = row[1:]  # a pandas index column
            if len(row) != len(COLUMNS):
                sys.exit(f"{path}:{i + 1}: expected {len(COLUMNS)} columns, found {len(row)}")
            if row[2] == "lat":
                continue  # the header
            yield dict(zip(COLUMNS, row))


def record(r):
    fields = {
        "name": {"value": r["city"], "type": "STRING"},
        "asciiName": {"value": r["city_ascii"], "type": "STRING"},
        "country": {"value": r["iso2"], "type": "STRING"},
        "countryName": {"value": r["country"], "type": "STRING"},
        "admin": {"value": r["admin_name"], "type": "STRING"},
        "location": {"value": {"latitude": float(r["lat"]), "longitude": float(r["lng"])}, "type": "LOCATION"},
    }
    if r["capital"]:
        fields["capital"] = {"value": r["capital"], "type": "STRING"}
    if r["population"]:
        fields["population"] = {"value": int(float(r["population"])), "type": "INT64"}
    return {"recordName": "c" + r["id"], "recordType": "City", "fields": fields}


def query(predicate, args=None, sort=None, limit=None, page=None, record_type="City"):
    """One line of a queries file, on the `City` type unless `record_type` says otherwise."""
    line = {"recordType": record_type, "predicate": predicate}
    if args is not None:
        line["args"] = args
    if sort is not None:
        line["sort"] = sort
    if limit is not None:
        line["limit"] = limit
    if page is not None:
        line["page"] = page
    return line


def write(out, records, queries, name="cities"):
    """Writes OUT/NAME.jsonl (one record a line) and OUT/queries.jsonl."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name + ".jsonl"), "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    with open(os.path.join(out, "queries.jsonl"), "w", encoding="utf-8") as f:
        for line in queries:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"{len(records)} {name}, {len(queries)} queries -> {out}/{name}.jsonl, {out}/queries.jsonl")


def queries(cities):
    by_name = {}
    for c in cities:
        by_name.setdefault(c["city_ascii"], c)

    def at(name):
        c = by_name[name]
        return {"latitude": float(c["lat"]), "longitude": float(c["lng"])}

    q = query
    desc = [{"field": "population", "ascending": False}]
    near = "distanceToLocation:fromLocation:(location, %@) < %@"
    return [
        # Two-field conjunctions: an equality and a range, all matches.
        q("country == %@ AND population > %@", ["US", 100000]),
        q("country == %@ AND population > %@", ["DE", 20000]),
        q("admin == %@ AND population > %@", ["California", 50000]),
        q("capital == %@ AND population > %@", ["admin", 1000000]),
        # The same, sorted, first page.
        q("country == %@ AND population > %@", ["GB", 10000], desc, 20),
        # Radius searches around real cities (km), all matches.
        q(near, [at("Paris"), 10]),
        q(near, [at("London"), 50]),
        q(near, [at("New York"), 100]),
        q(near + " AND population > %@", [at("Tokyo"), 50, 100000]),
        q(near + " AND country == %@", [at("Strasbourg"), 150, "FR"]),
        # Nearest first: the first page, and page 5 through cursors.
        q("TRUEPREDICATE", sort=[{"field": "location", "nearest": at("Berlin")}], limit=20),
        q("TRUEPREDICATE", sort=[{"field": "location", "nearest": at("Chicago")}], limit=20, page=5),
        # Prefix, equality on a name, sorted ranges, IN, text.
        q("name BEGINSWITH %@", ["San"], [{"field": "name"}], 50),
        q("asciiName == %@", ["Springfield"]),
        q("population BETWEEN {%@, %@}", [100000, 200000], desc, 20),
        q("country IN %@", [["FR", "ES", "IT"]], desc, 20),
        q("self CONTAINS %@", ["san"]),
        # A deep page: the 10th page of US cities by population.
        q("country == %@", ["US"], desc, 20, 10),
    ]


def run(usage, read, to_record, to_queries):
    """The command line of a data script: `SCRIPT CITIES OUT_DIR` (else `usage`, its docstring)."""
    if len(sys.argv) != 3:
        sys.exit(usage.strip().splitlines()[2].strip())
    cities = list(read(sys.argv[1]))
    write(sys.argv[2], [to_record(c) for c in cities], to_queries(cities))


if __name__ == "__main__":
    run(__doc__, rows, record, queries)
