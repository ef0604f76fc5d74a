"""What the deploy webhooks need from the rest of the server, wired by `bot/main.py`."""

from __future__ import annotations

from typing import Protocol


class PushResult(Protocol):
    @property
    def stored(self) -> tuple[str, ...]: ...  # deploy ids stored by this delivery

    @property
    def repeated(self) -> tuple[str, ...]: ...  # ids an earlier delivery stored: nothing new

    @property
    def errors(self) -> tuple[str, ...]: ...  # why the body was refused, naming fields; nothing stored

    @property
    def warnings(self) -> tuple[str, ...]: ...


class DeployIntake(Protocol):
    """Parses and stores pushed deploy events (`sync.push.PushIntake`)."""

    def open(self, endpoint: str) -> str: ...  # register the endpoint's push source; its name

    def accept(self, endpoint: str, text: str, *, delivery: str = "") -> PushResult: ...

    def refuse(self, endpoint: str, why: str) -> None: ...
