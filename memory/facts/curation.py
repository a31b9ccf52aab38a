"""Keeping the memory store tidy: the expiry sweep and the curator.

- The sweep deletes memories whose lifetime is over (a feeling after six hours, an event after a
  week): expired rows are already invisible to every read, and keeping them would keep personal
  data for longer than we said.
- The curator archives facts nobody has used in a long time that never mattered much, and folds
  near-duplicates (the same fact stored twice in different words) into one. It never touches a
  pinned memory, and never archives what a caregiver confirmed.

Both are idempotent: a second run finds nothing left to do.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memory.facts.models import Memory
from memory.facts.store import _bump_scope

STALE_AFTER = timedelta(days=90)
STALE_MAX_IMPORTANCE = 1
# Two memories of one type in one namespace this similar say the same thing.
FOLD_COSINE = 0.9
SWEEP_BATCH = 1000


@dataclass(frozen=True)
class CurationReport:
    archived: int = 0
    folded: int = 0


def memories_expire(*, now: datetime | None = None) -> int:
    """Delete memories past their lifetime, in batches. Returns how many went."""
    now = now or timezone.now()
    total = 0
    while True:
        with transaction.atomic():
            rows = list(
                Memory.objects.filter(expires_at__lte=now)
                .order_by("expires_at")
                .values_list("id", "scope")[:SWEEP_BATCH]
            )
            if not rows:
                return total
            for scope in sorted({scope for _, scope in rows}):
                _bump_scope(scope, reset=True)
            # Later versions point at earlier ones (supersedes); those links are cleared by the
            # foreign key's SET NULL.
            Memory.objects.filter(id__in=[row_id for row_id, _ in rows]).delete()
            total += len(rows)


def _scopes_with_live_memories() -> list[str]:
    return sorted(
        set(
            Memory.objects.filter(status=Memory.Status.ACTIVE)
            .values_list("scope", flat=True)
            .distinct()
        )
    )


def memories_curate(*, scope: str | None = None, now: datetime | None = None) -> CurationReport:
    """Archive stale trivia and fold near-duplicates, for one scope or all of them."""
    now = now or timezone.now()
    archived = folded = 0
    for each in [scope] if scope else _scopes_with_live_memories():
        report = _curate_scope(each, now=now)
        archived += report.archived
        folded += report.folded
    return CurationReport(archived=archived, folded=folded)


def _curate_scope(scope: str, *, now: datetime) -> CurationReport:
    with transaction.atomic():
        revision = _bump_scope(scope)
        live = Memory.objects.filter(scope=scope, status=Memory.Status.ACTIVE).filter(
            Q(expires_at__isnull=True) | Q(expires_at__gt=now)
        )
        stale = live.filter(
            pinned=False,
            confirmed=False,
            importance__lte=STALE_MAX_IMPORTANCE,
        ).filter(
            Q(last_used_at__lt=now - STALE_AFTER)
            | Q(last_used_at__isnull=True, updated_at__lt=now - STALE_AFTER)
        )
        archived = stale.update(status=Memory.Status.ARCHIVED, updated_at=now, revision=revision)
        folded = _fold_duplicates(live.filter(pinned=False), revision=revision, now=now)
    return CurationReport(archived=archived, folded=folded)


def _rank(memory: Memory) -> tuple:
    """Which of several duplicates survives: confirmed, important, used, recent."""
    return (memory.confirmed, memory.importance, memory.use_count, memory.updated_at)


def _fold_duplicates(rows, *, revision: int, now: datetime) -> int:
    groups: dict[tuple, list[Memory]] = defaultdict(list)
    for memory in rows:
        if memory.embedding:
            groups[(memory.namespace, memory.type, memory.persona)].append(memory)
    folded = 0
    for members in groups.values():
        if len(members) < 2:
            continue
        vectors = np.stack([np.frombuffer(bytes(m.embedding), dtype="<f4") for m in members])
        similar = vectors @ vectors.T
        taken: set[int] = set()
        for i in range(len(members)):
            if i in taken:
                continue
            cluster = [i] + [
                j
                for j in range(i + 1, len(members))
                if j not in taken and similar[i, j] >= FOLD_COSINE
            ]
            if len(cluster) < 2:
                continue
            taken.update(cluster)
            group = [members[k] for k in cluster]
            _fold(group, revision=revision, now=now)
            folded += len(group)
    return folded


def _fold(group: list[Memory], *, revision: int, now: datetime) -> Memory:
    """Replace duplicates with one curated memory that keeps the best wording and all their use."""
    survivor = max(group, key=_rank)
    Memory.objects.filter(id__in=[m.id for m in group]).update(
        status=Memory.Status.ARCHIVED, updated_at=now, revision=revision
    )
    refs = list(dict.fromkeys(ref for m in group for ref in m.entity_refs))
    labels = {k: v for m in group for k, v in m.entity_labels.items()}
    return Memory.objects.create(
        namespace=survivor.namespace,
        scope=survivor.scope,
        key=survivor.key,
        person_id=survivor.person_id,
        content=survivor.content,
        metadata={**survivor.metadata, "folded_from": [str(m.id) for m in group]},
        type=survivor.type,
        entity_refs=refs,
        entity_labels=labels,
        subtype=survivor.subtype,
        importance=max(m.importance for m in group),
        pinned=False,
        memory_key=survivor.memory_key,
        source=Memory.Source.CURATED_FOLD,
        status=Memory.Status.ACTIVE,
        confirmed=any(m.confirmed for m in group),
        confirmed_by_id=survivor.confirmed_by_id,
        confirmed_at=survivor.confirmed_at,
        confidence=max(m.confidence for m in group),
        supersedes=survivor,
        expires_at=survivor.expires_at,
        ttl_minutes=survivor.ttl_minutes,
        last_used_at=max((m.last_used_at for m in group if m.last_used_at), default=None),
        use_count=sum(m.use_count for m in group),
        embedding=survivor.embedding,
        persona=survivor.persona,
        revision=revision,
        created_at=now,
        updated_at=now,
    )
