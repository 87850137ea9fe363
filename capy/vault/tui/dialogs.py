"""The browser's two actions that write to disk, each behind a confirmation that says what
will happen: restore (a session's files back, byte for byte, into a folder one can change)
and resume (restore where the agent looks, then close the browser and run the agent's resume
command). Both call the library behind `capy vault restore` and `capy vault resume`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from capy.vault.errors import RestoreConflictError, VaultError
from capy.vault.resume import ResumePlan
from capy.vault.tui.printable import printable

if TYPE_CHECKING:
    from capy.vault import Vault
    from capy.vault.restore import RestoredFile
    from capy.vault.resume import ResumeTarget

_Result = TypeVar("_Result")
_DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} #dialog {{
    width: 90%; max-width: 100; height: auto; max-height: 90%;
    border: thick $primary; background: $surface; padding: 1 2;
}}
{name} .what {{ margin: 0 0 1 0; }}
{name} #problem {{ color: $error; margin: 1 0 0 0; }}
{name} #buttons {{ height: auto; margin: 1 0 0 0; }}
{name} Button {{ margin: 0 2 0 0; }}
"""


def restored_summary(label: str, restored: list[RestoredFile], folder: Path) -> str:
    """One sentence of what a restore did."""
    written = sum(item.written for item in restored)
    there = len(restored) - written
    kept = f" ({there} already there with the same bytes)" if there else ""
    return f"restored {written} of {len(restored)} files of {label} into {folder}{kept}"


class Confirmation(ModalScreen[_Result]):
    """A dialog with a Confirm and a Cancel button; a problem is shown in it, and it stays."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "confirm":
            self.confirm()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def confirm(self) -> None:
        raise NotImplementedError

    def show_problem(self, error: Exception, advice: str) -> None:
        if isinstance(error, RestoreConflictError) and error.clash is not None:
            sentence = f"{error.clash} is already there with other bytes; nothing was written: "
            sentence += advice
        elif isinstance(error, OSError):
            where = error.filename or "there"
            sentence = f"cannot write {where}: {error.strerror or error}; nothing was written: "
            sentence += advice
        else:
            sentence = getattr(error, "message", None) or str(error)
        self.query_one("#problem", Static).update(Text(printable(sentence)))


class RestoreDialog(Confirmation[str]):
    """Where to restore a session's files; dismissed with the sentence of what was done."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="RestoreDialog")

    def __init__(self, vault: Vault, label: str, folder: Path) -> None:
        super().__init__()
        self.vault = vault
        self.label = label
        self.folder = folder

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(printable(f"Restore {self.label}"), style="bold"), classes="what")
            yield Static(
                Text(
                    "Writes its transcript and sidecars back, byte for byte, into this folder "
                    "(Enter to restore, Esc to cancel). A file already there with other bytes "
                    "stops the restore before anything is written."
                ),
                classes="what",
            )
            yield Input(printable(str(self.folder)), id="folder")
            yield Static("", id="problem")
            with Horizontal(id="buttons"):
                yield Button("Restore", id="confirm", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#folder", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.confirm()

    def confirm(self) -> None:
        from capy.vault.restore import restore_session

        typed = self.query_one("#folder", Input).value.strip()
        if not typed:
            self.query_one("#problem", Static).update("give the folder to restore into")
            return
        folder = Path(typed).expanduser()
        try:
            restored = restore_session(self.vault, self.label, folder)
        except (VaultError, OSError) as error:
            self.show_problem(error, "choose another folder")
            return
        self.dismiss(restored_summary(self.label, restored, folder))


class ResumeDialog(Confirmation[ResumePlan]):
    """Confirms a resume; dismissed with the plan (files restored) or None."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="ResumeDialog")

    def __init__(self, vault: Vault, target: ResumeTarget) -> None:
        super().__init__()
        self.vault = vault
        self.target = target

    def compose(self) -> ComposeResult:
        target = self.target
        where = f"in {target.cwd}" if target.cwd else "in the current folder"
        with Vertical(id="dialog"):
            yield Static(Text(printable(f"Resume {target.label}"), style="bold"), classes="what")
            yield Static(
                Text(
                    printable(
                        f"Restores its files into {target.folder}, where its agent looks for "
                        f"them, then closes the browser and runs `{target.command}` {where}."
                    )
                ),
                classes="what",
            )
            yield Static("", id="problem")
            with Horizontal(id="buttons"):
                yield Button("Resume", id="confirm", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#confirm", Button).focus()

    def confirm(self) -> None:
        from capy.rules import load_rules
        from capy.vault.resume import prepare_resume

        try:
            plan = prepare_resume(self.vault, self.target.label, load_rules())
        except (VaultError, OSError) as error:
            self.show_problem(error, "resume it from its agent, or restore this copy elsewhere")
            return
        self.dismiss(plan)
