"""Benchmarks that print figures (`capy bench ...`); tests never assert timings."""
