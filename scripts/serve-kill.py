#!/usr/bin/env python3
"""`cirrus serve` SIGKILLed under load, from outside (issue 49): N rounds (default 10) of C clients
(default 4) writing over HTTP — creates, updates and replaces with the change tag the server gave,
deletes, 1–20 operations a request — with the server SIGKILLed at a random moment in each round and
restarted on the same directory. After each restart every acknowledged record must be there with
exactly the acknowledged fields and change tag, and every acknowledged deletion gone; a request the
kill cut off must have left each of its records as it was or as asked. After the last round the
server is killed once more while idle and `cirrus verify` must find the container clean.

Acknowledged: HTTP 200, the whole body, and the record's item in `records` not an error object.
Standard library only; one connection per request (http.client never resends one).

    scripts/serve-kill.py [--rounds 10] [--clients 4] [--cirrus .build/release/cirrus] [--seed S]
                          [--kill-after 0-2000] [--interrupt 0.5 --interrupt-ms 1000]

The kill falls --kill-after milliseconds after every client has had its first answer. With
--interrupt, that share of the rounds sends SIGINT first and SIGKILL up to --interrupt-ms later, so
that the kill can cut a clean stop short — while it closes the container and writes a checkpoint.

Exit status 0 when no acknowledged record was lost and nothing unexpected was answered, 1 otherwise.
Tests/CirrusShellTests/ServeKillTests.swift is the same check in the test suite (three rounds).
"""

import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cirrus_test_server import CONTAINER, cirrus_binary  # noqa: E402

WORDS = ["brick", "été", "東京", 'quote"d', "back\\slash", "🚀"]
PIECES = ["a", "b", "z", " ", "é", "ß", "東", "🚀", "\n", '"', "\\", "\t", "0"]


class Server:
    """A `cirrus serve` process on DIR, on a port it picks (read from its first line)."""

    def __init__(self, cirrus, db, log_path):
        self.log_path = log_path
        with open(log_path, "w") as log:
            self.process = subprocess.Popen(
                [cirrus, "serve", "--db", db, "--container", CONTAINER, "--port", "0"],
                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        self.port = None
        while self.port is None:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", self.output())
            if m:
                self.port = int(m.group(1))
            elif self.process.poll() is not None:
                raise SystemExit(f"cirrus serve exited: {self.output()}")
            elif time.time() > deadline:
                self.kill()
                raise SystemExit("cirrus serve did not listen within 60 s")
            else:
                time.sleep(0.02)

    def output(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def kill(self, interrupt_first=None):
        """SIGKILL; with `interrupt_first` seconds, SIGINT that long before it, so that the kill
        can fall while the server closes its container (a checkpoint at close, when the log holds
        1,000 or more changed records) — as a service manager's stop timeout would."""
        if interrupt_first is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            time.sleep(interrupt_first)
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def path(self, operation, query):
        return f"/database/1/{CONTAINER}/development/public/{operation}?{query}"


def post(port, path, body, timeout=15):
    """(status, parsed JSON) for a whole answer; raises when the answer did not come whole."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, body=json.dumps(body).encode(),
                     headers={"Content-Type": "application/json", "Connection": "close"})
        response = conn.getresponse()
        data = response.read()  # raises IncompleteRead when the body is cut short
        return response.status, json.loads(data)
    finally:
        conn.close()


def typed(fields):
    """Fields as {name: (TYPE, value)}: exact comparison, type included."""
    return {k: (v.get("type"), v.get("value")) for k, v in fields.items()}


class Writer:
    """One client: its own records (w<i>-<n>), one user, and what the server acknowledged."""

    def __init__(self, index, web_auth_token, seed):
        self.index = index
        self.token = web_auth_token
        self.rng = random.Random(seed)
        self.known = {}  # name -> ("live", typed fields, tag) | ("deleted",)
        self.in_flight = []  # operations of the request whose answer never came
        self.next_name = 0
        self.acknowledged = 0
        self.latencies = []
        self.unexpected = []
        self.last_failure = ""
        self.in_flight_done = 0  # in flight at a kill, found done after it
        self.answered = threading.Event()  # set at this round's first answer

    def fields(self, full):
        r = self.rng
        f = {"step": {"value": r.randrange(1 << 30), "type": "INT64"}}
        if full:
            f["writer"] = {"value": self.index, "type": "INT64"}
        if r.random() < 0.6:
            n = r.randrange(2000) if r.random() < 0.1 else r.randrange(40)
            f["text"] = {"value": "".join(r.choice(PIECES) for _ in range(n)), "type": "STRING"}
        if r.random() < 0.5:
            f["ratio"] = {"value": r.randrange(1 << 20) / 64 - 4096, "type": "DOUBLE"}
        if r.random() < 0.4:
            f["tags"] = {"value": [r.choice(WORDS) for _ in range(1 + r.randrange(3))], "type": "STRING_LIST"}
        if r.random() < 0.3:
            f["counts"] = {"value": [r.randrange(1000) - 500 for _ in range(1 + r.randrange(4))], "type": "INT64_LIST"}
        return f

    def batch(self):
        live = sorted(n for n, s in self.known.items() if s[0] == "live")
        ops = []
        for _ in range(1 + self.rng.randrange(20)):
            roll = self.rng.randrange(100)
            if roll < 45 or not live:
                name = f"w{self.index}-{self.next_name}"
                self.next_name += 1
                f = self.fields(True)
                ops.append({"name": name, "kind": "create", "before": None, "sent": f, "after": typed(f)})
                continue
            name = live.pop(self.rng.randrange(len(live)))
            before = self.known[name]
            if roll < 70:
                f = self.fields(False)
                ops.append({"name": name, "kind": "update", "before": before, "sent": f,
                            "after": {**before[1], **typed(f)}})
            elif roll < 85:
                f = self.fields(True)
                ops.append({"name": name, "kind": "replace", "before": before, "sent": f, "after": typed(f)})
            else:
                ops.append({"name": name, "kind": "delete", "before": before, "sent": None, "after": None})
        return ops

    @staticmethod
    def operation_json(op):
        record = {"recordName": op["name"], "recordType": "Item"}
        if op["before"] and op["before"][0] == "live":
            record["recordChangeTag"] = op["before"][2]
        if op["sent"] is not None:
            record["fields"] = op["sent"]
        return {"operationType": op["kind"], "record": record}

    def write(self, port, path, deadline):
        """Batches until one gets no whole answer (the kill) or the deadline passes."""
        while time.time() < deadline:
            ops = self.batch()
            started = time.perf_counter()
            try:
                status, answer = post(port, path, {"operations": [self.operation_json(op) for op in ops]})
            except (OSError, http.client.HTTPException, ValueError) as e:
                self.in_flight += ops
                self.last_failure = repr(e)
                return
            self.latencies.append(time.perf_counter() - started)
            self.answered.set()
            items = answer.get("records") if isinstance(answer, dict) else None
            if status != 200 or not isinstance(items, list) or len(items) != len(ops):
                self.unexpected.append(f"HTTP {status}: {json.dumps(answer)[:300]}")
                self.in_flight += ops
                return
            for op, item in zip(ops, items):
                self.acknowledge(op, item)

    def acknowledge(self, op, item):
        name = op["name"]
        if "serverErrorCode" in item:
            self.unexpected.append(f"{op['kind']} {name}: {item['serverErrorCode']} {item.get('reason', '')}")
            return  # refused: nothing written, the earlier state stands
        if item.get("recordName") != name:
            self.unexpected.append(f"{op['kind']} {name} answered {json.dumps(item)[:300]}")
            self.in_flight.append(op)
            return
        if op["after"] is None:
            if item.get("deleted") is True:
                self.known[name] = ("deleted",)
                self.acknowledged += 1
            else:
                self.unexpected.append(f"delete {name} answered {json.dumps(item)[:300]}")
                self.in_flight.append(op)
            return
        tag = item.get("recordChangeTag")
        got = typed(item.get("fields", {}))
        if not isinstance(tag, str):
            self.unexpected.append(f"{op['kind']} {name} answered without a change tag")
            self.in_flight.append(op)
            return
        if got != op["after"]:
            self.unexpected.append(f"{op['kind']} {name} acknowledged {got}, sent for {op['after']}")
        self.known[name] = ("live", got, tag)  # what was acknowledged is what must stay
        self.acknowledged += 1

    def names(self):
        return sorted(set(self.known) | {op["name"] for op in self.in_flight})

    @staticmethod
    def matches(state, got):
        if state is None or state[0] == "deleted":
            return got is None
        return (got is not None and got.get("recordType") == "Item" and got.get("recordChangeTag") == state[2]
                and typed(got.get("fields", {})) == state[1])

    def check(self, found):
        """Problems with what the server kept (found: name -> record or None); settles the in-flight."""
        problems = []
        pending = {op["name"] for op in self.in_flight}
        for name, state in sorted(self.known.items()):
            if name not in pending and not self.matches(state, found.get(name)):
                problems.append(f"{name}: acknowledged {state}, found {found.get(name)}")
        for op in self.in_flight:
            got = found.get(op["name"])
            if self.matches(op["before"], got):
                continue
            self.in_flight_done += 1
            if op["after"] is None and got is None:
                self.known[op["name"]] = ("deleted",)
            elif op["after"] is not None and got is not None and typed(got.get("fields", {})) == op["after"]:
                self.known[op["name"]] = ("live", op["after"], got.get("recordChangeTag"))
            else:
                problems.append(f"{op['name']}: {op['kind']} in flight, found {got}, neither {op['before']} nor asked")
        self.in_flight = []
        return problems


def look_over(server, token, names):
    """name -> record (or None when NOT_FOUND), by records/lookup, 200 names a request."""
    found = {}
    path = server.path("records/lookup", f"ckAPIToken={token}")
    for i in range(0, len(names), 200):
        chunk = names[i:i + 200]
        status, answer = post(server.port, path, {"records": [{"recordName": n} for n in chunk]})
        items = answer.get("records") if isinstance(answer, dict) else None
        if status != 200 or not isinstance(items, list) or len(items) != len(chunk):
            raise SystemExit(f"records/lookup: HTTP {status} {json.dumps(answer)[:300]}")
        for name, item in zip(chunk, items):
            if item.get("serverErrorCode") == "NOT_FOUND":
                found[name] = None
            elif "serverErrorCode" in item or item.get("recordName") != name:
                raise SystemExit(f"records/lookup {name}: {json.dumps(item)[:300]}")
            else:
                found[name] = item
    return found


def create_token(cirrus, db, *args):
    out = subprocess.run([cirrus, "token", "create", "--db", db, *args], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="kills (default 10)")
    parser.add_argument("--clients", type=int, default=4, help="writing clients (default 4)")
    parser.add_argument("--cirrus", help="the cirrus binary (default: the debug build's)")
    parser.add_argument("--seed", type=int, help="replay a run (default: from the clock)")
    parser.add_argument("--kill-after", default="0-2000",
                        help="kill between these milliseconds after every client's first answer")
    parser.add_argument("--interrupt", type=float, default=0.0,
                        help="the share of rounds whose SIGKILL follows a SIGINT (a clean stop cut short)")
    parser.add_argument("--interrupt-ms", type=int, default=1000, help="at most this long between SIGINT and SIGKILL")
    parser.add_argument("--keep", action="store_true", help="keep the container directory")
    args = parser.parse_args()
    cirrus = cirrus_binary(args.cirrus)
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % (1 << 32)
    low, high = (int(x) for x in args.kill_after.split("-"))
    rng = random.Random(seed)
    print(f"serve-kill: seed {seed}, {args.rounds} rounds x {args.clients} clients, {cirrus}", flush=True)

    root = tempfile.mkdtemp(prefix="cirrus-serve-kill-")
    db = os.path.join(root, "db")
    os.mkdir(db)
    log = os.path.join(root, "serve.log")
    api = create_token(cirrus, db)
    writers = [Writer(i, create_token(cirrus, db, "--user", f"_writer{i}"), seed * 100 + i)
               for i in range(args.clients)]
    server = Server(cirrus, db, log)
    lost = 0
    unexpected = 0
    restarts = []
    began = time.time()
    try:
        for rnd in range(args.rounds):
            kill_after = rng.randrange(low, high + 1) / 1000
            before = sum(w.acknowledged for w in writers)
            deadline = time.time() + 60
            threads = [threading.Thread(target=w.write, args=(
                server.port, server.path("records/modify", f"ckAPIToken={api}&ckWebAuthToken={w.token}"), deadline))
                for w in writers]
            for w in writers:
                w.answered.clear()
            for t in threads:
                t.start()
            # The kill falls at a random moment once every client has had an answer: a kill before
            # the load would test nothing.
            for w in writers:
                w.answered.wait(timeout=max(0.0, deadline - time.time()))
            time.sleep(kill_after)
            interrupt = rng.randrange(args.interrupt_ms + 1) / 1000 if rng.random() < args.interrupt else None
            server.kill(interrupt)
            for t in threads:
                t.join()
            in_flight = sum(len(w.in_flight) for w in writers)
            done = sum(w.in_flight_done for w in writers)
            started = time.perf_counter()
            server = Server(cirrus, db, log)
            restarts.append(time.perf_counter() - started)
            names = [n for w in writers for n in w.names()]
            found = look_over(server, api, names)
            problems = [p for w in writers for p in w.check(found)]
            odd = [u for w in writers for u in w.unexpected]
            for w in writers:
                w.unexpected = []
            lost += len(problems)
            unexpected += len(odd)
            acknowledged = sum(w.acknowledged for w in writers)
            how = "" if interrupt is None else f", {interrupt * 1000:.0f} ms after a SIGINT"
            print(f"round {rnd + 1}: killed {kill_after * 1000:.0f} ms into the load{how}; {acknowledged - before} operations "
                  f"acknowledged ({acknowledged} in all), {in_flight} in flight "
                  f"({sum(w.in_flight_done for w in writers) - done} found done); restarted in "
                  f"{restarts[-1]:.2f} s; {len(names)} records checked, {len(problems)} lost", flush=True)
            for p in problems[:10] + odd[:10]:
                print("  " + p)
        server.kill()  # once more, idle, then the files themselves
        verify = subprocess.run([cirrus, "verify", "--db", db], capture_output=True, text=True)
        latencies = sorted(x for w in writers for x in w.latencies)
        acknowledged = sum(w.acknowledged for w in writers)
        print(f"serve-kill: {args.rounds} rounds, {len(latencies)} requests answered, {acknowledged} operations "
              f"acknowledged, {len(names)} records checked, {lost} lost, {unexpected} unexpected answers; "
              f"{time.time() - began:.1f} s in all, restart median {statistics.median(restarts):.2f} s, "
              f"request p50 {latencies[len(latencies) // 2] * 1000:.1f} ms "
              f"p99 {latencies[int(len(latencies) * 0.99)] * 1000:.1f} ms; "
              f"cirrus verify exit {verify.returncode}")
        if verify.returncode != 0:
            print(verify.stdout + verify.stderr)
        return 0 if lost == 0 and unexpected == 0 and verify.returncode == 0 else 1
    finally:
        server.kill()
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
