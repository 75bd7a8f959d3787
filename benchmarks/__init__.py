"""Benchmark suite of adk-asgi: ``python -m benchmarks [--quick]`` (see RESULTS.md)."""
