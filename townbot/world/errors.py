"""The one error type for broken town data: it always names file, place and problem."""

from __future__ import annotations


class DataError(Exception):
    """A world or persona file is unusable; the message says where and why."""

    def __init__(self, file: str, place: str, problem: str) -> None:
        self.file = file
        self.place = place
        self.problem = problem
        where = f"{file}: {place}" if place else file
        super().__init__(f"{where}: {problem}")


def format_location(loc: tuple[object, ...]) -> str:
    """Turn a pydantic error location such as ('sectors', 3, 'arenas') into 'sectors[3].arenas'."""
    text = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
    return text.removeprefix(".") or "(top level)"
