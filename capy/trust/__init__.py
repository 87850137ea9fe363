"""Project files are untrusted: what a project may change, and the user's list of trusted projects.

A cloned repository can ship `.capy/rules/*.yaml`, `.capy/config.toml` and `.capy.toml`. From a
project, such files may only tighten security; what would loosen it is ignored with one warning
unless the user ran `capy trust` on the project and its files have not changed since.
"""
