"""Typed, immutable views of the effective (merged) packs, one module per pack.

Code elsewhere in capy reads policy through these models, never through raw dicts, so a renamed
field is a type error at one place instead of a KeyError at run time.
"""
