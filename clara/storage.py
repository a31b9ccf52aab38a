"""Static files storage for collected files: hashed names and gzip, under any DEBUG."""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class CollectedStaticStorage(CompressedManifestStaticFilesStorage):
    """WhiteNoise's compressed manifest storage, but pages link the hashed names with DEBUG on
    too (`make run`): Django's own links the plain names under DEBUG, which WhiteNoise can only
    serve with `max-age=0`, so every visit re-checks every file (a round trip each on a phone).
    Hashed names are served as immutable for a year."""

    def url(self, name: str | None, force: bool = False) -> str:
        return super().url(name, force=True)
