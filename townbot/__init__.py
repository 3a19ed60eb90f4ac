"""townbot: a town of generative agents (Park et al., UIST 2023) on Discord, in a terminal or headless."""

__version__ = "0.1.0"


def installed_version() -> str:
    """The version pip installed; the source's own when townbot runs from a checkout that was
    never installed. importlib.metadata loads only when asked: it is slow to import."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("townbot")
    except PackageNotFoundError:
        return __version__
