#!/usr/bin/env python3
"""Checks `cirrus serve` from outside, against a real server on a loopback port.

  scripts/web-services-check.py [--cirrus PATH] [--examples] [--metrics] [--fuzz SECONDS]

--examples runs every `sh` block of docs/web-services.md, in order, in one bash (so variables
carry over), with BASE, TOKEN, ALICE, BOB, MANAGEMENT (a management token) and DIR (the served container
directory) set and the cirrus being tested first on PATH, and compares each block's output with the `json`
or `text` block that follows it: in JSON, every member shown must be present with that value
("…" matches any string; arrays must have the same length), members not shown are not checked;
in text, "…" matches any run of characters.

--fuzz SECONDS runs schemathesis (PyPI) with docs/openapi.yaml against the server for at most
SECONDS: no 5xx, statuses, content types and response bodies as the spec says.

--metrics makes known requests to a fresh server and parses GET /metrics with prometheus_client
(PyPI)'s text-format parser, checking the counters, histogram and gauges against them.

With no option, all three run (fuzzing for 60 s). Each run starts its own server on a fresh
container in a temporary directory (port 0: the server picks a free port and prints it), and
stops it. Exit status 1 on any failure.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from cirrus_test_server import ROOT, Server, cirrus_binary


# ---------------------------------------------------------------------------------------------
# docs/web-services.md examples

def blocks(markdown):
    """(language, text) of every fenced block."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", markdown, re.S | re.M)]


def subset(expected, actual, path="$"):
    """Problems where `actual` does not contain `expected` (see the module comment)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {json.dumps(actual)[:200]}"]
        out = []
        for k, v in expected.items():
            if k not in actual:
                out.append(f"{path}.{k}: missing")
            else:
                out += subset(v, actual[k], f"{path}.{k}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: expected {len(expected)} elements, got {json.dumps(actual)[:200]}"]
        return [p for i, (e, a) in enumerate(zip(expected, actual)) for p in subset(e, a, f"{path}[{i}]")]
    if expected == "…" and isinstance(actual, str):
        return []
    if expected != actual or type(expected) is not type(actual):
        return [f"{path}: expected {json.dumps(expected)}, got {json.dumps(actual)[:200]}"]
    return []


def run_examples(cirrus):
    with open(os.path.join(ROOT, "docs", "web-services.md")) as f:
        found = blocks(f.read())
    pairs = []
    for i, (lang, text) in enumerate(found):
        if lang == "sh":
            after = found[i + 1] if i + 1 < len(found) else ("", "")
            if after[0] not in ("json", "text"):
                raise SystemExit(f"docs/web-services.md: sh block {len(pairs) + 1} has no json or text block after it")
            pairs.append((text, after))
    server = Server(cirrus)
    failures = []
    try:
        workdir = tempfile.mkdtemp(prefix="cirrus-examples-")
        script = ["set -euo pipefail"]
        for n, (sh, _) in enumerate(pairs):
            script.append(f"{{\n{sh}\n}} > {workdir}/{n}.out 2>&1")
        env = dict(os.environ, BASE=server.base, TOKEN=server.token, ALICE=server.alice, BOB=server.bob,
                   MANAGEMENT=server.management, DIR=server.db,
                   PATH=os.path.dirname(os.path.abspath(cirrus)) + os.pathsep + os.environ.get("PATH", ""))
        result = subprocess.run(["bash", "-c", "\n".join(script)], env=env, capture_output=True, text=True,
                                timeout=120)
        if result.returncode != 0:
            failures.append(f"the examples' script failed ({result.returncode}): {result.stderr}")
        for n, (sh, (lang, expected)) in enumerate(pairs):
            first = sh.strip().splitlines()[0]
            try:
                with open(f"{workdir}/{n}.out") as f:
                    actual = f.read()
            except FileNotFoundError:
                failures.append(f"example {n + 1} ({first}): did not run")
                continue
            if lang == "json":
                try:
                    problems = subset(json.loads(expected), json.loads(actual))
                except json.JSONDecodeError as e:
                    problems = [f"not JSON ({e}): {actual[:300]}"]
            else:
                pattern = ".*".join(re.escape(p) for p in expected.rstrip("\n").split("…"))
                problems = [] if re.match(pattern, actual, re.S) else [f"got: {actual[:500]}"]
            for p in problems:
                failures.append(f"example {n + 1} ({first}): {p}")
        shutil.rmtree(workdir, ignore_errors=True)
    finally:
        server.stop()
    print(f"docs/web-services.md: {len(pairs)} examples, {len(failures)} failures")
    for f in failures:
        print("  " + f)
    return not failures


# ---------------------------------------------------------------------------------------------
# /metrics

def run_metrics(cirrus):
    """A fresh server, known requests, then GET /metrics parsed by prometheus_client's parser (the
    reference Python implementation of the text format) and checked against those requests."""
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        raise SystemExit("prometheus_client is not installed (pip install prometheus-client)")
    import urllib.error
    import urllib.request
    server = Server(cirrus)
    problems = []
    try:
        def call(op, body, user=None):
            query = f"ckAPIToken={server.token}" + (f"&ckWebAuthToken={user}" if user else "")
            request = urllib.request.Request(f"{server.base}/public/{op}?{query}", data=json.dumps(body).encode(),
                                             method="POST")
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    return response.status
            except urllib.error.HTTPError as e:
                return e.code
        creates = {"operations": [{"operationType": "create", "record": {"recordName": f"m{i}", "recordType": "Place",
                                                                           "fields": {"n": {"value": i}}}} for i in range(3)]}
        statuses = [call("records/modify", creates, server.alice),
                    call("records/query", {"query": {"recordType": "Place"}}),
                    call("records/query", {"query": {"recordType": "Place"}}),
                    call("records/query", {"query": {"recordType": "Place", "filterBy": [
                        {"fieldName": "n", "comparator": "EQUALS", "fieldValue": {"value": "x"}}]}}),
                    call("users/caller", {})]
        if statuses != [200, 200, 200, 400, 421]:
            problems.append(f"statuses {statuses}")
        with urllib.request.urlopen(f"{server.origin}/metrics", timeout=10) as response:
            kind = response.headers.get("Content-Type", "")
            text = response.read().decode()
        if not kind.startswith("text/plain; version=0.0.4"):
            problems.append(f"content type {kind}")
        samples = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value

        def value(name, **labels):
            return sum(v for (n, ls), v in samples.items() if n == name and labels.items() <= dict(ls).items())

        expected = [
            (value("cirrus_requests_total", operation="records/modify", status="200"), 1),
            (value("cirrus_requests_total", operation="records/query", status="200"), 2),
            (value("cirrus_requests_total", operation="records/query", status="400"), 1),
            (value("cirrus_request_errors_total", operation="records/query", code="BAD_REQUEST"), 1),
            (value("cirrus_request_errors_total", operation="users/caller", code="AUTHENTICATION_REQUIRED"), 1),
            (value("cirrus_records_written_total", environment="development"), 3),
            (value("cirrus_records_read_total", environment="development"), 6),
            (value("cirrus_request_duration_seconds_count", operation="records/query"), 3),
            (value("cirrus_request_duration_seconds_bucket", operation="records/query", le="+Inf"), 3),
            (value("cirrus_store_live_records", environment="development"), 3),
            (value("cirrus_requests_in_flight"), 0),
        ]
        for i, (got, want) in enumerate(expected):
            if got != want:
                problems.append(f"check {i + 1}: {got} != {want}")
    finally:
        server.stop()
    print(f"/metrics: {len(samples)} samples, {len(problems)} problems")
    for p in problems:
        print("  " + p)
    return not problems


# ---------------------------------------------------------------------------------------------
# schemathesis

def run_fuzz(cirrus, seconds):
    if shutil.which("schemathesis") is None:
        raise SystemExit("schemathesis is not installed (pip install schemathesis)")
    server = Server(cirrus)
    try:
        # A few records so that queries and lookups find something.
        seed = {"operations": [
            {"operationType": "create", "record": {"recordName": f"p{i}", "recordType": "Place", "fields": {
                "kind": {"value": "cafe" if i % 2 else "museum"}, "rank": {"value": i}}}} for i in range(5)]}
        subprocess.run(["curl", "-sf", "-X", "POST", "-o", "/dev/null", "-d", json.dumps(seed),
                        f"{server.base}/public/records/modify?ckAPIToken={server.token}&ckWebAuthToken={server.alice}"],
                       check=True)
        command = [
            "schemathesis", "run", os.path.join(ROOT, "docs", "openapi.yaml"), "--url", server.origin,
            "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,"
            "response_schema_conformance",
            "--max-examples", "30", "--seed", "1", "--no-color", "--max-time", str(seconds),
            "--generation-with-security-parameters", "false", "--request-timeout", "10",
        ]
        env = dict(os.environ, CIRRUS_TOKEN=server.token, CIRRUS_WEB_AUTH=server.alice,
                   SCHEMATHESIS_HOOKS="schemathesis_hooks")
        env["PYTHONPATH"] = os.path.join(ROOT, "scripts") + os.pathsep + env.get("PYTHONPATH", "")
        try:
            result = subprocess.run(command, env=env, timeout=seconds + 60, text=True, capture_output=True)
            print(result.stdout[-6000:])
            ok = result.returncode == 0
            if not ok:
                print(result.stderr[-3000:])
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            print(out[-3000:])
            print(f"schemathesis: stopped after {seconds} s (the bound); no failure seen before it")
            ok = "FAILURES" not in out
        if server.process.poll() is not None:
            print("cirrus serve died during the run:\n" + server.output()[-3000:])
            ok = False
    finally:
        server.stop()
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cirrus", help="the cirrus binary (default: swift build --show-bin-path)/cirrus")
    parser.add_argument("--examples", action="store_true")
    parser.add_argument("--fuzz", type=int, metavar="SECONDS")
    parser.add_argument("--metrics", action="store_true")
    args = parser.parse_args()
    cirrus = cirrus_binary(args.cirrus)
    both = not args.examples and args.fuzz is None and not args.metrics
    ok = True
    if args.examples or both:
        ok = run_examples(cirrus) and ok
    if args.metrics or both:
        ok = run_metrics(cirrus) and ok
    if args.fuzz is not None or both:
        ok = run_fuzz(cirrus, args.fuzz or 60) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
