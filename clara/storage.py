"""Static files storage for collected files: hashed names and gzip, under any DEBUG."""

from django.conf import settings
from whitenoise.storage import CompressedManifestStaticFilesStorage


class CollectedStaticStorage(CompressedManifestStaticFilesStorage):
    """WhiteNoise's compressed manifest storage, but pages link the hashed names with DEBUG on
    too (`make run`): Django's own links the plain names under DEBUG, which WhiteNoise can only
    serve with `max-age=0`, so every visit re-checks every file (a round trip each on a phone).
    Hashed names are served as immutable for a year."""

    def url(self, name: str | None, force: bool = False) -> str:
        return super().url(name, force=True)

    def create_compressor(self, **kwargs):
        # Brotli at WhiteNoise's quality costs ~40 CPU seconds over Swagger's, the admin's and the
        # charts' scripts: right once per deploy, wrong on every `make run` (STATIC_BROTLI off
        # under DEBUG). gzip alone already serves the chart bundle in a third of its size.
        return super().create_compressor(use_brotli=settings.STATIC_BROTLI, **kwargs)
