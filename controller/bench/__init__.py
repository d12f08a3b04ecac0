"""Benchmarks (``tablectl bench ...``), each printing JSON."""
