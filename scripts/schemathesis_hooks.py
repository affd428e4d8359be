"""Schemathesis hooks for scripts/web-services-check.py: every generated request carries the API
token and a web auth token of the test server (CIRRUS_TOKEN, CIRRUS_WEB_AUTH), so that the fuzzer
reaches the operations instead of stopping at authentication (which the Swift tests cover)."""

import os

import schemathesis


@schemathesis.hook
def map_query(context, query):
    query = dict(query or {})
    query["ckAPIToken"] = os.environ["CIRRUS_TOKEN"]
    query["ckWebAuthToken"] = os.environ["CIRRUS_WEB_AUTH"]
    return query
