"""Word normalisation shared by indexing and querying: lowercase, ё→е, Snowball stems,
and Chinese, Japanese and Korean runs cut into overlapping pairs of characters.

A word is stemmed in the language its script says (Cyrillic: Russian; Greek, Arabic,
Armenian: their own), a Latin one in its passage's language
(`passagelang`: English unless the passage's function words clearly say another). A query
does not know which language the passages that answer it are in, so each of its words
becomes a group of its stems in every language the index holds (`query_groups`).

FTS5's unicode61 tokenizer neither folds ё nor stems Russian, and takes a run of Han
characters between two punctuation marks for one word (so no word inside it is ever
found), so memo normalises in Python and hands FTS5 space-separated terms; the query goes
through the same function, so both sides always agree.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from functools import cache, lru_cache

import Stemmer

from memo_core.text.passagelang import ENGLISH

# Bump whenever a change here can normalise a word differently: indexes record it and rebuild.
NORMALIZER_VERSION = 5

_WORD = re.compile(r"\w+", re.UNICODE)
# Hyphenated compounds (Wi-Fi, e-mail, Wi‑Fi with a non-breaking hyphen): their parts are
# words, and so is the whole written together, so "wifi" finds "Wi-Fi" and back.
_HYPHENS = "-\u2010\u2011"
_COMPOUND = re.compile(rf"\w+(?:[{_HYPHENS}]\w+)+")
_HYPHEN = re.compile(rf"[{_HYPHENS}]")
# In a file or folder name: camelCase humps, and the separators people use between words.
_HUMP = re.compile(r"(?<=[a-zа-яё0-9])(?=[A-ZА-ЯЁ])")
_NAME_SEPARATORS = re.compile(r"[/_.\s]+")
# Cyrillic letters (a word with any is stemmed as Russian), and runs of the letters of memo's
# two own scripts, which `cyrillic_share` weighs.
_CYRILLIC = re.compile(r"[\u0400-\u04ff]+")
_LATIN_RUN = re.compile(r"[A-Za-z]+")
# Scripts that say their language (Snowball's name for it), Cyrillic first as ever. Not
# Devanagari or Tamil, which Snowball stems too: `\w` ends a word at their vowel signs
# (combining marks), so their words reach the stemmer in pieces.
_SCRIPTS = [
    (_CYRILLIC, "russian"),
    (re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]"), "greek"),
    (re.compile(r"[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff]"), "arabic"),
    (re.compile(r"[\u0530-\u058f]"), "armenian"),
]
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
# A query word's stems, one a language an index holds, the first leading (`query_groups`).
Group = tuple[str, ...]
# Words longer than this are hashes, base64 or noise; stemming them only costs time.
_MAX_WORD = 40


class _Stemmers(threading.local):
    """This thread's stemmers: PyStemmer forbids concurrent calls on one instance, and
    indexing, searching and refreshes stem on threads of their own (each made on first use)."""

    def __init__(self) -> None:
        self.made: dict[str, Stemmer.Stemmer] = {}

    def stem(self, lang: str, word: str) -> str:
        if lang in _AS_ENGLISH:
            lang = ENGLISH
        elif lang == "german":
            return _light_german(self.stem(ENGLISH, word))
        if lang not in self.made:
            self.made[lang] = Stemmer.Stemmer(lang)
        return str(self.made[lang].stemWord(word))


_stemmers = _Stemmers()


# Languages whose own Snowball stems lost to English's on a real question set over
# technical pages on every figure (first, top 3, nDCG@10; bench/realsets, words only,
# BENCHMARKS.md): their words take English's suffix rules, which cut their plurals
# (`requêtes` → `requêt`, `sauvegardées` → `sauvegardé`) and leave alone the English terms
# such notes are full of. Snowball's French lost 7 of MDN's 157 French questions' top 3;
# its Spanish tied with English's and stays (`guardar` finds `guardan`).
_AS_ENGLISH = frozenset({"french"})


def _light_german(english: str) -> str:
    """A German word's stem: its English one (`Cookies` → `cooki`, `Skripte` → `skript`) with
    a plural's or case's `-en` cut (`Sicherungen` → `sicherung`, as `Sicherung`). Snowball's
    German stemmer lost to this on technical German (bench/realsets mdn-de, words only:
    top 3 75 against 79 of 96, unstemmed 75): it folds umlauts and cuts the English loanwords
    such notes are full of (`Header` → `head`), and joins `sich` with `sicher`, `Seite`
    with `seit`."""
    return english[:-2] if len(english) > 5 and english.endswith("en") else english


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


@cache
def _stemmer(lang: str) -> Callable[[str], str]:
    """A word's stem: in its script's language, a Latin word in `lang` (a cache a language,
    keyed by the word alone: a search or a refresh stems each word many times)."""

    @lru_cache(maxsize=200_000)
    def stem(word: str) -> str:
        if len(word) > _MAX_WORD:
            return word
        for script, its_lang in _SCRIPTS:
            if script.search(word):
                return _stemmers.stem(its_lang, word)
        if _LATIN.search(word):
            return _stemmers.stem(lang, word)
        return word

    return stem


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


def stems(text: str, lang: str = ENGLISH) -> list[str]:
    """The stems of `text`'s words, in order, as the index holds them (`lang`: the
    language of its Latin words, `passagelang.passage_languages`)."""
    return list(map(_stemmer(lang), words(text)))


def cyrillic_share(text: str) -> float | None:
    """The share of Cyrillic among `text`'s Cyrillic and Latin letters (None: it has none):
    which of the two scripts whose words memo stems it is mostly written in."""
    cyrillic = sum(map(len, _CYRILLIC.findall(text)))
    latin = sum(map(len, _LATIN_RUN.findall(text)))
    return cyrillic / (cyrillic + latin) if cyrillic + latin else None


def normalize(text: str, lang: str = ENGLISH) -> str:
    """Text as stored in the FTS5 index: stems separated by single spaces."""
    return " ".join(stems(text, lang))


def query_terms(query: str, limit: int = 64, joined: bool = True, lang: str = ENGLISH) -> list[str]:
    """Distinct stems of a user query (Latin words in `lang`), stopwords dropped unless
    nothing else is left (`joined`: hyphenated compounds also written together, as `words`
    does)."""
    return [group[0] for group in query_groups(query, (lang,), limit, joined)]


def group_stems(groups: Iterable[Group]) -> list[str]:
    """Every stem of these groups (`query_groups`), once, in order: what a passage may
    hold of the query's words."""
    return list(dict.fromkeys(t for g in groups for t in g))


def query_groups(
    query: str, langs: Iterable[str], limit: int = 64, joined: bool = True
) -> list[Group]:
    """A group a distinct query word (`query_terms`' stem, in the first of `langs`, leads
    it): its distinct stems in each of `langs`, any of which a passage may hold for it.
    A word in a script that says its language has one; so has every word where `langs`
    is one language."""
    order = list(dict.fromkeys(langs))
    ws = words(query, joined)
    kept = [w for w in ws if w not in STOPWORDS] or ws
    groups: dict[str, dict[str, None]] = {}
    for w in kept:
        stems = [_stemmer(lang)(w) for lang in order]
        if stems[0] not in groups and len(groups) >= limit:
            break
        groups.setdefault(stems[0], {}).update(dict.fromkeys(stems))
    return [tuple(members) for members in groups.values()]
