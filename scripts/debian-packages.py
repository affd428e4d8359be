#!/usr/bin/env python3
"""Real data for `qbench --data`: Debian's package index as Web Services records.

    scripts/debian-packages.py PACKAGES OUT_DIR

PACKAGES is a Debian `Packages` index (deb822 stanzas: Package, Version, Section, Priority,
Installed-Size, Maintainer, Depends, Tag, Description, ...), plain text — e.g. the one apt keeps,
decompressed: `/usr/lib/apt/apt-helper cat-file /var/lib/apt/lists/*_main_binary-amd64_Packages.lz4`
(bookworm's main: about 63 000 packages). Writes OUT_DIR/packages.jsonl (one `Package` record
per package: long descriptions, dependency lists of up to hundreds of names, debtags) and
OUT_DIR/queries.jsonl: the queries a package browser asks — text searches over the descriptions
that match a few or thousands of packages, equality and range conjunctions, list elements,
prefixes, sorted pages, a deep page — with arguments taken from the data, so `qbench --data …
--queries …` compares Cirrus and SQLite on them. A query whose value the file lacks is left out.
"""
import re
import sys

import worldcities


def stanzas(path):
    """Every stanza of a deb822 file as a dict (continuation lines joined with newlines)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        fields, last = {}, None
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if fields:
                    yield fields
                fields, last = {}, None
            elif line[0] in " \t" and last:
                fields[last] += "\n" + (line[1:] if line.strip() != "." else "")
            elif ":" in line:
                last, value = line.split(":", 1)
                fields[last] = value.strip()
        if fields:
            yield fields


def names(relation):
    """The package names of a Depends-style field, in order, each once."""
    out = []
    for part in re.split(r"[,|]", relation or ""):
        n = part.strip().split(" ")[0].split(":")[0]
        if n and n not in out:
            out.append(n)
    return out


def record(p):
    description = p.get("Description", "")
    summary, _, body = description.partition("\n")
    fields = {
        "name": {"value": p["Package"], "type": "STRING"},
        "version": {"value": p.get("Version", ""), "type": "STRING"},
        "summary": {"value": summary, "type": "STRING"},
    }
    if body.strip():
        fields["description"] = {"value": body.strip(), "type": "STRING"}
    for field, key in [("section", "Section"), ("priority", "Priority"), ("maintainer", "Maintainer"),
                       ("source", "Source"), ("homepage", "Homepage")]:
        if p.get(key):
            fields[field] = {"value": p[key].split(" ")[0] if key == "Source" else p[key], "type": "STRING"}
    for field, key in [("installedSize", "Installed-Size"), ("size", "Size")]:
        if p.get(key, "").isdigit():
            fields[field] = {"value": int(p[key]), "type": "INT64"}
    depends = names(p.get("Depends")) + [n for n in names(p.get("Pre-Depends")) if n not in names(p.get("Depends"))]
    if depends:
        fields["depends"] = {"value": depends, "type": "STRING_LIST"}
    tags = [t.strip() for t in p.get("Tag", "").replace("\n", " ").split(",") if t.strip()]
    if tags:
        fields["tags"] = {"value": tags, "type": "STRING_LIST"}
    return {"recordName": "pkg-" + p["Package"], "recordType": "Package", "fields": fields}


def query(predicate, args=None, sort=None, limit=None, page=None):
    return worldcities.query(predicate, args, sort, limit, page, record_type="Package")


def queries(records):
    values = lambda f: {r["fields"][f]["value"] for r in records if f in r["fields"]}
    sections, maintainers, packages = values("section"), values("maintainer"), values("name")
    listed = lambda f: {v for r in records if f in r["fields"] for v in r["fields"][f]["value"]}
    depends, tags = listed("depends"), listed("tags")
    python_team = next((m for m in sorted(maintainers) if m.startswith("Debian Python Team")), None)
    by_size = [{"field": "installedSize", "ascending": False}]
    wanted = [
        # Text over summaries and descriptions: a few matches, hundreds, thousands.
        (True, lambda: query("self CONTAINS %@", ["wayland"])),
        (True, lambda: query("self CONTAINS %@", ["python"])),
        (True, lambda: query("self CONTAINS %@", ["library"])),
        (True, lambda: query("ANY tokenize(%@, 'Cdl') IN allTokens", ["postgresql sqlite"])),
        (True, lambda: query("ALL tokenize(%@, 'Cdl') IN allTokens", ["python library"])),
        (True, lambda: query("self CONTAINS %@ AND section == %@", ["server", "net"])),
        (True, lambda: query("self CONTAINS %@", ["library"], by_size, 20)),
        # Equality and range conjunctions, all matches and sorted pages.
        ("python" in sections, lambda: query("section == %@ AND installedSize > %@", ["python", 1000])),
        ("libs" in sections, lambda: query("section == %@ AND installedSize > %@", ["libs", 10000])),
        ("devel" in sections, lambda: query("section == %@", ["devel"], by_size, 20)),
        ("optional" in values("priority"), lambda: query("priority == %@ AND installedSize > %@", ["optional", 100000])),
        (python_team is not None, lambda: query("maintainer == %@", [python_team])),
        (True, lambda: query("installedSize BETWEEN {%@, %@}", [50000, 60000], by_size, 20)),
        # List elements: a dependency most packages have, one few have; a debtag.
        ("libc6" in depends, lambda: query("depends CONTAINS %@", ["libc6"])),
        ("libsqlite3-0" in depends, lambda: query("depends CONTAINS %@", ["libsqlite3-0"])),
        ("libsqlite3-0" in depends, lambda: query("depends CONTAINS %@ AND section == %@", ["libsqlite3-0", "utils"])),
        ("role::program" in tags, lambda: query("tags CONTAINS %@ AND installedSize > %@", ["role::program", 50000])),
        # Names: prefix, equality, IN.
        (True, lambda: query("name BEGINSWITH %@", ["python3-"], [{"field": "name"}], 50)),
        ("bash" in packages, lambda: query("name == %@", ["bash"])),
        (True, lambda: query("name IN %@", [[n for n in ["bash", "coreutils", "sqlite3", "postgresql", "nginx"] if n in packages]])),
        # A deep page: the 10th page of the libraries by size.
        ("libs" in sections, lambda: query("section == %@", ["libs"], by_size, 20, 10)),
    ]
    return [make() for needed, make in wanted if needed]


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    seen, records = set(), []
    for p in stanzas(sys.argv[1]):
        if "Package" in p and p["Package"] not in seen:  # one record per name: the first stanza
            seen.add(p["Package"])
            records.append(record(p))
    worldcities.write(sys.argv[2], records, queries(records), name="packages")
