"""System checks of the memory app that read the database (registered in `MemoryConfig.ready`).

`check_development_data`: with DEBUG off, a database holding values encrypted with a development
key (one anyone can derive) is refused; `migrate`, the release step, runs it first.
"""

from memory.core.crypto import DEVELOPMENT_DATA_HINT, PREFIXES, development_key_ids
from memory.core.fields import FingerprintField, KeyedDigestField, LookupHashField
from memory.reencrypt import encrypted_models


def development_data(using: str = "default") -> list[str]:
    """`table.column` of every encrypted column holding a value written with a development key.

    One query per column (the first match ends it); a full scan where nothing matches, so it
    runs where time allows: `migrate` (a release) and `check --database`, not per request.
    """
    from django.apps import apps
    from django.conf import settings
    from django.db import connections

    connection = connections[using]
    quote = connection.ops.quote_name
    tables = set(connection.introspection.table_names())
    patterns = [
        f"%{prefix}{kid}:%"
        for prefix in PREFIXES
        for kid in sorted(development_key_ids(settings.SECRET_KEY))
    ]
    found = []
    with connection.cursor() as cursor:
        for model, fields in encrypted_models(apps.get_models()):
            table = model._meta.db_table
            if table not in tables:
                continue  # not migrated yet
            for field in fields:
                if isinstance(field, FingerprintField | LookupHashField | KeyedDigestField):
                    continue  # keyed hashes carry no key id
                column = f"CAST({quote(field.column)} AS TEXT)"
                where = " OR ".join(f"{column} LIKE %s" for _ in patterns)
                cursor.execute(f"SELECT 1 FROM {quote(table)} WHERE {where} LIMIT 1", patterns)  # noqa: S608 - names from the models
                if cursor.fetchone():
                    found.append(f"{table}.{field.column}")
    return found


def check_development_data(app_configs=None, databases=None, **kwargs) -> list:
    """System check (database): with DEBUG off, refuse a database written with a development key.

    Such data opens with a key anyone can derive from a SECRET_KEY in this repository (or from
    the deployment's own, as DEBUG does). `migrate`, the release step, runs this check first.
    """
    from django.conf import settings
    from django.core import checks

    if settings.DEBUG or not databases:
        return []
    errors = []
    for alias in databases:
        found = development_data(alias)
        if found:
            errors.append(
                checks.Error(
                    f"Database '{alias}' holds data encrypted with a development key (written "
                    f"with DEBUG on and no CLARA_ENCRYPTION_KEYS, e.g. by `make run`): "
                    f"{', '.join(found[:5])}{', ...' if len(found) > 5 else ''}. With DEBUG off "
                    "it is refused.",
                    hint=DEVELOPMENT_DATA_HINT,
                    id="memory.E001",
                )
            )
    return errors
