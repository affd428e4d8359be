"""A `cirrus serve` for scripts: a fresh container in a temporary directory, an API token, web
auth tokens for _alice and _bob and a management token, the server on a loopback port it picks (port 0; the port is read
from its first line), stopped with SIGINT (then killed after 20 s) and the directory removed."""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTAINER = "iCloud.local.cirrus"


def cirrus_binary(given=None):
    """The cirrus binary: `given`, or the debug build's."""
    if given is None:
        bin_path = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, check=True, capture_output=True,
                                  text=True).stdout.strip()
        given = os.path.join(bin_path, "cirrus")
    if not os.path.exists(given):
        raise SystemExit(f"{given} does not exist: swift build --product cirrus")
    return given


class Server:
    """`cirrus serve` on a fresh container, with an API token and web auth tokens."""

    def __init__(self, cirrus):
        self.dir = tempfile.mkdtemp(prefix="cirrus-serve-")
        db = os.path.join(self.dir, "db")
        os.mkdir(db)
        self.db = db

        def token(*args):
            out = subprocess.run([cirrus, "token", "create", "--db", db, *args], check=True,
                                 capture_output=True, text=True)
            return out.stdout.strip()

        self.token = token()
        self.alice = token("--user", "_alice")
        self.bob = token("--user", "_bob")
        self.management = token("--management")
        self.log = open(os.path.join(self.dir, "serve.log"), "w+")
        self.process = subprocess.Popen([cirrus, "serve", "--db", db, "--port", "0", "--container", CONTAINER],
                                        stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        self.port = None
        while time.time() < deadline and self.port is None:
            if self.process.poll() is not None:
                raise SystemExit(f"cirrus serve exited: {self.output()}")
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", self.output())
            if m:
                self.port = int(m.group(1))
            else:
                time.sleep(0.1)
        if self.port is None:
            self.stop()
            raise SystemExit("cirrus serve did not start within 30 s")
        self.origin = f"http://127.0.0.1:{self.port}"
        self.base = f"{self.origin}/database/1/{CONTAINER}/development"

    def output(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
