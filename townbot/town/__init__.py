"""The game master: world state, the tick, perception, and (later) the town service."""
