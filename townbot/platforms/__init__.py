"""Thin adapters between people and TownService: the terminal and Discord."""
