"""The package version, in one place (read by hatchling and by ``ocsched --version``)."""

__version__ = "0.1.0"
