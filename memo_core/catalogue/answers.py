"""What the formatting layer writes (SPEC "Tool texts"): hits, notices, statuses, changes,
notes read, refreshes; `key: (Russian, English)`. The Russian texts SPEC quotes are exactly
as it quotes them."""

from __future__ import annotations

TEXTS: dict[str, tuple[str, str]] = {
    "status.kept_in": ("индекс хранится в {path} ({why})", "index kept in {path} ({why})"),
}
