"""The store's one error type, shared by the database and its writer lock."""


class StoreError(Exception):
    """The database cannot be used as asked; the message says what to do instead."""
