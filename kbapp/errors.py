"""Domain exceptions. Each carries a message a person can act on; the CLI prints it."""


class KbError(Exception):
    """Base class of every error kbapp raises on purpose."""


class ExtractionError(KbError):
    """A document could not be turned into text (corrupt, encrypted, unreadable).
    `retry`: the cause may pass (OCR under load, a time limit); try again later."""

    def __init__(self, message: str, retry: bool = False) -> None:
        super().__init__(message)
        self.retry = retry

    def __reduce__(self):  # crosses the process boundary from extraction workers
        return (type(self), (str(self), self.retry))


class UnsupportedFormat(KbError):
    """kbapp has no extractor for this kind of file."""


class ModelError(KbError):
    """The embedding or rerank model could not be loaded or verified."""


class LibraryError(KbError):
    """The library folder or database cannot be used."""


class LibraryBusy(LibraryError):
    """Another kbapp process is writing to this library."""


class SearchError(KbError):
    """A search request that cannot be answered as asked (bad option, empty query)."""
