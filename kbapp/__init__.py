"""kbapp: a desktop knowledge base that runs entirely on the user's machine."""

__version__ = "0.1.0"
