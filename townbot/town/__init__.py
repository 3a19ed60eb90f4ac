"""The game master: world state, the tick, perception, and the town service."""
