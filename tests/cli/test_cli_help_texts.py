"""Every option and argument of every `capy` command says what it does in `--help`: one left
bare (`capy memory add --global`, `capy rules list --json`) told a person nothing."""

from __future__ import annotations

from capy.cli import build_app


def _commands(app, path):
    for name in app:
        if name.startswith("-"):
            continue
        command = app[name]
        yield f"{path} {name}", command
        yield from _commands(command, f"{path} {name}")


def test_every_parameter_has_help_text() -> None:
    bare = []
    for path, command in _commands(build_app(), "capy"):
        try:
            arguments = command.assemble_argument_collection(parse_docstring=True)
        except ValueError:  # a group of commands, with no command of its own
            continue
        bare += [
            f"{path} {'/'.join(argument.names)}"
            for argument in arguments
            if argument.parameter.show is not False and not (argument.parameter.help or "").strip()
        ]
    assert not bare, "parameters without help:\n" + "\n".join(bare)
