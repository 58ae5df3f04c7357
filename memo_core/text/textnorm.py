"""Word normalisation shared by indexing and querying: lowercase, ё→е, Snowball stems,
and Chinese, Japanese and Korean runs cut into overlapping pairs of characters.

FTS5's unicode61 tokenizer neither folds ё nor stems Russian, and takes a run of Han
characters between two punctuation marks for one word (so no word inside it is ever
found), so memo normalises in Python and hands FTS5 space-separated terms; the query goes
through the same function, so both sides always agree.
"""

from __future__ import annotations

import re
import threading
from functools import cache, lru_cache

import Stemmer

# Bump whenever a change here can normalise a word differently: indexes record it and rebuild.
NORMALIZER_VERSION = 3

_WORD = re.compile(r"\w+", re.UNICODE)
# Hyphenated compounds (Wi-Fi, e-mail, Wi‑Fi with a non-breaking hyphen): their parts are
# words, and so is the whole written together, so "wifi" finds "Wi-Fi" and back.
_HYPHENS = "-\u2010\u2011"
_COMPOUND = re.compile(rf"\w+(?:[{_HYPHENS}]\w+)+")
_HYPHEN = re.compile(rf"[{_HYPHENS}]")
# In a file or folder name: camelCase humps, and the separators people use between words.
_HUMP = re.compile(r"(?<=[a-zа-яё0-9])(?=[A-ZА-ЯЁ])")
_NAME_SEPARATORS = re.compile(r"[/_.\s]+")
# Runs of the letters of memo's two scripts: a word with Cyrillic is stemmed as Russian, and
# `cyrillic_share` weighs the two.
_CYRILLIC = re.compile(r"[\u0400-\u04ff]+")
_LATIN_RUN = re.compile(r"[A-Za-z]+")
# Scripts written without spaces between words (Han, Hiragana, Katakana) and Hangul, whose
# words carry their particles: a run of them is cut into overlapping pairs of characters
# (`产品组` gives `产品 品组`), the unit a word of one, two or more characters is found by
# in any run that holds it, with no dictionary to go wrong on names and new words.
_CJK_CHARS = (
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"
)
# The lowest of them: a text whose every character lies below it has none. Their patterns are
# compiled when a text first has such a character (9 ms, a twentieth of a one-shot search).
_CJK_FIRST = "\u1100"
_LATIN = re.compile(r"[a-z]")
# Words longer than this are hashes, base64 or noise; stemming them only costs time.
_MAX_WORD = 40


class _Stemmers(threading.local):
    """This thread's stemmers: PyStemmer forbids concurrent calls on one instance, and
    indexing, searching and refreshes stem on threads of their own (made on first use)."""

    def __init__(self) -> None:
        self.ru = Stemmer.Stemmer("russian")
        self.en = Stemmer.Stemmer("english")


_stemmers = _Stemmers()

# Dropped from queries only (never from the index): natural-language questions would
# otherwise match nearly every chunk through "the", "how", "как", "в" and be slow to rank.
STOPWORDS = frozenset(
    """a an and are as at be but by can could do does did for from had has have how i if in
    into is it its me my no not of on or our should so than that the their them then there
    these they this to was we were what when where which who why will with would you your
    а без бы был была были было быть в вам вас весь во вот все всех вы где да для до его
    ее если есть еще же за и из или им их к как какие какой когда ли мне мы на над не нет
    ни но ну о об он она они оно от по под при с со так также то того тоже только том у уже
    чем что чтобы эта эти это этот я""".split()
)


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    if len(word) > _MAX_WORD:
        return word
    if _CYRILLIC.search(word):
        return _stemmers.ru.stemWord(word)
    if _LATIN.search(word):
        return _stemmers.en.stemWord(word)
    return word


def words(text: str, joined: bool = True) -> list[str]:
    """Lowercased, ё-folded words of `text`, in order; then (`joined`) every hyphenated
    compound written together (`wi-fi` gives `wi`, `fi` and, at the end, `wifi`)."""
    low = text.lower().replace("ё", "е")
    found = _WORD.findall(low)
    if low and max(low) >= _CJK_FIRST and _cjk()[0].search(low):
        found = [piece for w in found for piece in _pairs(w)]
    if joined and _HYPHEN.search(low):
        found += [_HYPHEN.sub("", m) for m in _COMPOUND.findall(low)]
    return found


@cache
def _cjk() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A character of those scripts, and a run of them or of others."""
    return re.compile(f"[{_CJK_CHARS}]"), re.compile(f"[{_CJK_CHARS}]+|[^{_CJK_CHARS}]+")


def _pairs(word: str) -> list[str]:
    """`word` with each Chinese, Japanese or Korean run in it cut into overlapping pairs (a
    run of one character stays one); the rest of it (Latin, digits) as it is."""
    cjk, runs = _cjk()
    if not cjk.search(word):
        return [word]
    out: list[str] = []
    for run in runs.findall(word):
        if len(run) > 1 and cjk.match(run):
            out += [run[i : i + 2] for i in range(len(run) - 1)]
        else:
            out.append(run)
    return out


def path_text(rel: str, whole: bool = True) -> str:
    """The words of a note's path, for searching by them: folders and the file name split
    at `/`, `_`, `.` and camelCase humps, without the `.md`; `whole`: a segment with humps
    is a word as well (`MessageBox` gives `MessageBox Message Box`)."""
    stem = rel[: -len(".md")] if rel.lower().endswith(".md") else rel
    parts = []
    for segment in _NAME_SEPARATORS.split(stem):
        humps = _HUMP.split(segment)
        if whole or len(humps) == 1:
            parts.append(segment)
        if len(humps) > 1:
            parts += humps
    return " ".join(p for p in parts if p)


def stems(text: str) -> list[str]:
    """The stems of `text`'s words, in order, as the index holds them."""
    return list(map(_stem, words(text)))


def cyrillic_share(text: str) -> float | None:
    """The share of Cyrillic among `text`'s Cyrillic and Latin letters (None: it has none):
    which of the two scripts whose words memo stems it is mostly written in."""
    cyrillic = sum(map(len, _CYRILLIC.findall(text)))
    latin = sum(map(len, _LATIN_RUN.findall(text)))
    return cyrillic / (cyrillic + latin) if cyrillic + latin else None


def normalize(text: str) -> str:
    """Text as stored in the FTS5 index: stems separated by single spaces."""
    return " ".join(stems(text))


def query_terms(query: str, limit: int = 64, joined: bool = True) -> list[str]:
    """Distinct stems of a user query, stopwords dropped unless nothing else is left
    (`joined`: hyphenated compounds also written together, as `words` does)."""
    ws = words(query, joined)
    kept = [w for w in ws if w not in STOPWORDS] or ws
    seen: dict[str, None] = {}
    for w in kept:
        seen.setdefault(_stem(w), None)
        if len(seen) >= limit:
            break
    return list(seen)
