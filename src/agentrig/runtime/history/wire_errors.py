"""The error a part decoder raises for a value of the wrong shape, and how a JSON value's type is named in it.

Apart from `wire_decoding.py` so that the decoders of user content (`user_content.py`) raise the same error.
"""

from __future__ import annotations

__all__ = ["BadField", "json_type"]


class BadField(Exception):
    """A part or message value has the wrong shape; `field` is relative to the value being decoded."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
