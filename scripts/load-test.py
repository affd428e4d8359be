#!/usr/bin/env python3
"""A bounded load test of `cirrus serve` on loopback with wrk (Debian).

  scripts/load-test.py [--cirrus PATH] [--records N] [--seconds S] [--connections 1,16,64]
  scripts/load-test.py --soak SECONDS [--soak-writes] [--cirrus PATH] [--records N]

Seeds N Place records (10 per `bucket` value) through records/modify, then for each connection
count runs wrk (2 threads, S seconds) against
  - records/query: a selective query, `bucket == k` for k cycling over the buckets (10 records
    each, resultsLimit 20), read by an anonymous caller in the public database;
  - records/modify: one forceReplace of a random seeded record per request, as _alice;
and prints requests/s, p50, p99, errors (non-2xx and socket errors), the server's resident
memory (VmRSS, and VmHWM: its peak) after each run, and the server's CPU time (user + system)
per request — the figure to compare across runs on a machine shared with other work, where
requests/s moves with the load average (printed too). Bounded: 2 × len(connections) runs of S s.

--soak SECONDS is the leak check instead: one wrk of records/query at 16 connections for SECONDS
(with --soak-writes, a second wrk of records/modify at 4 connections beside it), the server's
VmRSS sampled every 5 s; prints the samples, RSS after the first 30 s (warm-up), at the end and
its peak, the slope of a least-squares line through the samples after warm-up (MB per minute),
and says whether RSS grew: more than 5 % and 2 MB/min after warm-up. Writes legitimately grow
memory until a checkpoint folds the log tail into segments, so the query-only soak is the clean
leak signal. Exit status 1 on any error response or a server that died (not on growth: the
figures are reported, for a person to judge).

Build the server in release mode first (swift build -c release --product cirrus); the default
binary is the release one. The server's durability is its default, fsync on every commit.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request

from cirrus_test_server import ROOT, Server

QUERY_LUA = """
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"query": {"recordType": "Place", "filterBy": [{"fieldName": "bucket", ' ..
    '"comparator": "EQUALS", "fieldValue": {"value": %%d}}]}, "resultsLimit": 20}', n %% %d)
  return wrk.format("POST", nil, nil, body)
end
"""

MODIFY_LUA = """
local n = 0
request = function()
  n = n + 1
  local i = math.random(0, %d)
  local body = string.format('{"operations": [{"operationType": "forceReplace", "record": {"recordName": "p%%d", ' ..
    '"recordType": "Place", "fields": {"bucket": {"value": %%d}, "rank": {"value": %%d}, ' ..
    '"name": {"value": "place %%d"}}}}]}', i, i %% %d, n, i)
  return wrk.format("POST", nil, nil, body)
end
"""


def memory(pid):
    with open(f"/proc/{pid}/status") as f:
        status = f.read()
    get = lambda key: int(re.search(rf"{key}:\s+(\d+) kB", status).group(1)) // 1024
    return get("VmRSS"), get("VmHWM")


def cpu_seconds(pid):
    """User + system CPU time the process has used, in seconds (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def seconds_of(text):
    """wrk latency text (`1.23ms`, `850.00us`, `1.02s`) in milliseconds."""
    m = re.match(r"([\d.]+)(us|ms|s|m)", text)
    value, unit = float(m.group(1)), m.group(2)
    return value * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]


def wrk(url, script, connections, seconds):
    out = subprocess.run(["wrk", "-t", str(min(2, connections)), "-c", str(connections), "-d", f"{seconds}s",
                          "--latency", "--timeout", "5s", "-s", script, url],
                         capture_output=True, text=True, timeout=seconds + 30).stdout
    if re.search(r"^\s+99%\s+\S+", out, re.M) is None:
        raise SystemExit(f"wrk's output has no latency distribution:\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p50 = seconds_of(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))
    p99 = seconds_of(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))
    errors = 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if m:
        errors += int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        errors += sum(int(x) for x in m.groups())
    return rps, p50, p99, total, errors


def soak(server, url, scripts, seconds, writes):
    """The leak check (see the module comment); returns whether it saw no error."""
    import threading
    import time

    runs = [("records/query", url("records/query"), "query.lua", 16)]
    if writes:
        runs.append(("records/modify", url("records/modify", server.alice), "modify.lua", 4))
    results = {}

    def run(name, u, script, c):
        try:
            results[name] = wrk(u, os.path.join(scripts, script), c, seconds)
        except BaseException as e:  # noqa: BLE001 — reported below
            results[name] = e

    threads = [threading.Thread(target=run, args=r) for r in runs]
    start = time.time()
    for t in threads:
        t.start()
    samples = []
    while any(t.is_alive() for t in threads):
        if server.process.poll() is not None:
            break
        samples.append((time.time() - start, memory(server.process.pid)[0]))
        time.sleep(5)
    for t in threads:
        t.join()
    ok = server.process.poll() is None
    print(f"soak: {seconds} s, {'records/query ×16 + records/modify ×4' if writes else 'records/query ×16'}")
    print("  RSS MB every 5 s: " + " ".join(str(m) for _, m in samples))
    for name, r in results.items():
        if isinstance(r, BaseException):
            print(f"  {name}: wrk failed: {r}")
            ok = False
            continue
        rps, p50, p99, total, errors = r
        print(f"  {name}: {rps:.0f} req/s, p50 {p50:.2f} ms, p99 {p99:.2f} ms, {total} requests, {errors} errors")
        ok = ok and errors == 0
    after = [(t, m) for t, m in samples if t >= 30]
    if len(after) >= 3:
        n = len(after)
        mt = sum(t for t, _ in after) / n
        mm = sum(m for _, m in after) / n
        slope = sum((t - mt) * (m - mm) for t, m in after) / max(1e-9, sum((t - mt) ** 2 for t, _ in after)) * 60
        warm, end, peak = after[0][1], after[-1][1], max(m for _, m in samples)
        grew = end > warm * 1.05 and slope > 2
        print(f"  RSS after warm-up {warm} MB, at the end {end} MB, peak {peak} MB, slope {slope:+.2f} MB/min: "
              + ("GROWS" if grew else "flat"))
    else:
        print("  too few samples after warm-up to judge")
    if not ok:
        print("the server died" if server.process.poll() is not None else "errors during the soak")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cirrus")
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", default="1,16,64")
    parser.add_argument("--soak", type=int, metavar="SECONDS", help="the leak check instead (at most 3600 s)")
    parser.add_argument("--soak-writes", action="store_true")
    args = parser.parse_args()
    if args.soak is not None and not 30 < args.soak <= 3600:
        raise SystemExit("--soak takes 31 to 3600 seconds")
    cirrus = args.cirrus
    if cirrus is None:
        path = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
        cirrus = os.path.join(path, "cirrus")
    if not os.path.exists(cirrus):
        raise SystemExit(f"{cirrus} does not exist: swift build -c release --product cirrus")
    buckets = max(1, args.records // 10)
    server = Server(cirrus)
    failed = False
    try:
        url = lambda op, user=None: (f"{server.base}/public/{op}?ckAPIToken={server.token}"
                                     + (f"&ckWebAuthToken={user}" if user else ""))
        for start in range(0, args.records, 200):
            ops = [{"operationType": "create", "record": {"recordName": f"p{i}", "recordType": "Place", "fields": {
                "bucket": {"value": i % buckets}, "rank": {"value": i}, "name": {"value": f"place {i}"}}}}
                   for i in range(start, min(args.records, start + 200))]
            request = urllib.request.Request(url("records/modify", server.alice), method="POST",
                                             data=json.dumps({"operations": ops}).encode())
            with urllib.request.urlopen(request, timeout=60) as r:
                answer = json.load(r)
                assert not any("serverErrorCode" in x for x in answer["records"]), answer
        rss, _ = memory(server.process.pid)
        scripts = tempfile.mkdtemp(prefix="cirrus-load-")
        with open(os.path.join(scripts, "query.lua"), "w") as f:
            f.write(QUERY_LUA % buckets)
        with open(os.path.join(scripts, "modify.lua"), "w") as f:
            f.write(MODIFY_LUA % (args.records - 1, buckets))
        if args.soak is not None:
            print(f"{args.records} records seeded; server RSS {rss} MB; load average {os.getloadavg()[0]:.2f}")
            failed = not soak(server, url, scripts, args.soak, args.soak_writes)
            print(f"load average at the end {os.getloadavg()[0]:.2f}")
            sys.exit(1 if failed else 0)  # (the server is stopped by `finally`)
        print(f"{args.records} records seeded; server RSS {rss} MB; wrk: 2 threads, {args.seconds} s per run; "
              f"load average {os.getloadavg()[0]:.2f}")
        print(f"{'operation':<16}{'conns':>6}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'requests':>10}{'errors':>8}"
              f"{'RSS MB':>8}{'peak MB':>9}{'CPU µs/req':>11}")
        for op, script, user in [("records/query", "query.lua", None), ("records/modify", "modify.lua", server.alice)]:
            for c in [int(x) for x in args.connections.split(",")]:
                cpu = cpu_seconds(server.process.pid)
                rps, p50, p99, total, errors = wrk(url(op, user), os.path.join(scripts, script), c, args.seconds)
                per = (cpu_seconds(server.process.pid) - cpu) / max(1, total) * 1e6
                rss, peak = memory(server.process.pid)
                failed = failed or errors > 0
                print(f"{op:<16}{c:>6}{rps:>10.0f}{p50:>9.2f}{p99:>9.2f}{total:>10}{errors:>8}{rss:>8}{peak:>9}"
                      f"{per:>11.0f}")
        # The answers were right, not just fast: one query checked by hand after the load.
        request = urllib.request.Request(url("records/query"), method="POST", data=json.dumps(
            {"query": {"recordType": "Place", "filterBy": [{"fieldName": "bucket", "comparator": "EQUALS",
                                                            "fieldValue": {"value": 7}}]}}).encode())
        with urllib.request.urlopen(request, timeout=10) as r:
            names = sorted(x["recordName"] for x in json.load(r)["records"])
        expected = sorted(f"p{i}" for i in range(args.records) if i % buckets == 7)
        if names != expected:
            print(f"wrong answer after the load: {names} != {expected}")
            failed = True
        if server.process.poll() is not None:
            print("the server died")
            failed = True
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
    finally:
        server.stop()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
