"""`capy completion SHELL`: the shell's completion script for every capy command and option."""

from __future__ import annotations

from typing import Literal

Shell = Literal["bash", "zsh", "fish", "powershell"]


def completion(shell: Shell, /) -> int:
    """Print the completion script for bash, zsh, fish or powershell, to save where the shell
    loads completions from:

        capy completion bash > ~/.local/share/bash-completion/completions/capy
        capy completion zsh > ~/.zsh/completions/_capy   # a folder on your $fpath
        capy completion fish > ~/.config/fish/completions/capy.fish

    The script lists the commands and options of this capy; print it again after an upgrade.

    Parameters
    ----------
    shell
        The shell to complete in.
    """
    from capy.cli import app
    from capy.cli.output import say

    # Generating walks every command, importing each module once: fine for a one-off command.
    say(app.generate_completion(prog_name="capy", shell=shell), end="")
    return 0
