"""townbot: a town of generative agents (Park et al., UIST 2023) on Discord, in a terminal or headless."""

__version__ = "0.1.0"
