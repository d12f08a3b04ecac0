"""Benchmarks (``tablectl bench ...``); each module's ``run_bench`` returns a JSON-ready dict."""
