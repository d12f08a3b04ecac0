"""Benchmarks (``tablectl bench ...``): each prints one JSON object."""
