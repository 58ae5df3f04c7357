"""The language of a passage's Latin-script words, for stemming them (`textnorm`).

Snowball stems German, French, Finnish… as well as English, but a stem is only as good as
the language it was chosen for: `Sicherungen` stemmed as English never meets `Sicherung`.
Words in other scripts say their language themselves (Cyrillic is stemmed as Russian, Greek
as Greek: `textnorm`); Latin letters do not, so a passage's language is read from the
function words it uses: short words every sentence of a language holds, chosen from those
that are not English words and not what code and commands are made of (`ls -la`, `du`,
`del`, `var`, `TODO`, `et al.`: each would name a language in English or Russian notes
full of them), and only where they stand as prose words, not inside a path, a link or a
hyphenated name (`bare-metal` links are not Norwegian). English is the default: another
language is chosen only where it has `MIN_HITS` such words or more, `ENGLISH_MARGIN` times
the English function words the text holds, and more than any other language (close ones
share words: Danish and Norwegian, Spanish and Portuguese, which tell them apart).

Measured on the English corpora memo is benchmarked on (BENCHMARKS.md's office-dev-en and
SciFact, 29,000 passages, the Russian office-dev-ru with its English code, and the real
question sets' Kubernetes and VK Cloud pages): none is taken for another language.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

ENGLISH = "english"
# A passage needs this many function words of a language…
MIN_HITS = 3
# … and this many times its English ones, for its Latin words to be stemmed in it.
ENGLISH_MARGIN = 2.0

# Frequent English words that are no language's function word above, nor code's: a passage
# that holds them is not taken for another language on a few borrowed words.
_ENGLISH_WORDS = """the of to that are was were have has been which would should could will you
they their there about into than these those also because only other some such what when
where who how its our your it but can may must does did being"""

# Snowball's names (`Stemmer.algorithms()`) and the function words that tell each apart.
_FUNCTION_WORDS = {
    "german": """und der die das nicht ist mit auf wird werden eine einen einem einer sich
        auch oder wenn dem den des ein zu von für ich sie wir sind kann können bei nach noch
        nur aus über wie dass wurde durch zum zur vom diese dieser dieses hat haben muss
        soll keine kein mehr schon sehr hier jetzt immer weil aber""",
    "french": """les des est une pour dans avec sont pas qui que sur cette ces elle nous vous
        ils ou mais donc être avoir fait peut comme tout tous aussi leur leurs sous entre chez
        très où été cela ceci lorsque quand qu je""",
    "spanish": """los las por para con una que como pero más este esta estos estas está
        están muy también cuando donde puede entre sobre todos tiene hacer desde hasta porque
        cual sus""",
    "italian": """della dello delle degli che è una con sono gli nel nella dei alla anche
        come più questo questa essere hanno può tra fra molto quando dove perché quindi ogni
        loro stato stata""",
    "portuguese": """não uma para das que mais como mas também são está ao aos pelo pela
        isso esta este quando onde pode seu sua muito já foi entre sobre""",
    "dutch": """het een van niet die voor zijn maar ook bij wordt worden nog wel naar kan dit
        deze uit hebben heeft geen meer tot wat""",
    "swedish": """och att det som är på för inte den har ett jag så från kan ska också eller
        när bara efter alla hur vara finns måste""",
    "danish": """og det er som på af ikke har den et jeg så fra kan skal også eller når kun
        efter alle hvor være blev bliver hvad mig nu""",
    "norwegian": """og det er som på av ikke har den et jeg så fra kan skal også eller når
        bare etter alle hvor være finnes må blir ble hva meg""",
    "finnish": """ja ei että oli ovat mutta kun tai myös jos niin kuin sen tämä voi mitä
        joka olla vain siitä sekä hän jo nyt kanssa""",
    "estonian": """ja ei oli ning siis või aga mis kui ka""",
    "turkish": """ve bir bu için ile olarak olan çok daha gibi ama kadar sonra şekilde yok
        değil ki veya göre bunu ise""",
    "indonesian": """yang di itu dengan untuk tidak dari dalam akan pada juga karena adalah
        bisa atau oleh saya kita mereka sudah telah lebih""",
    "romanian": """și în cu pe nu din este sunt care pentru mai că sau fost acest această dar
        prin""",
    "hungarian": """és hogy nem egy van volt csak már mint még vagy azt pedig lesz kell
        nagyon ezt nincs amely amikor""",
    "czech": """je že jsou ale jak tak jako které když nebo už jsem jeho při bude být také
        jen podle však není""",
    "polish": """się nie że jest jak ale dla są przez czy tylko już jego może być także który
        która które jednak oraz gdy""",
    "catalan": """els amb és però també són aquest aquesta quan pot molt seva això perquè
        fins dels pels""",
    "lithuanian": """ir kad yra iš į bet kaip buvo taip dar nuo apie kai""",
}
_WORDS: dict[str, frozenset[str]] = {
    ENGLISH: frozenset(_ENGLISH_WORDS.split()),
    **{lang: frozenset(words.split()) for lang, words in _FUNCTION_WORDS.items()},
}
# The languages a passage's Latin words may be stemmed in.
LANGUAGES = frozenset(_WORDS)
# The function words of the languages other than English.
_NOT_ENGLISH = frozenset(w for lang, words in _WORDS.items() if lang != ENGLISH for w in words)
# Which languages each function word counts for.
_LANGS_OF: dict[str, tuple[str, ...]] = {}
for _lang, _words in _WORDS.items():
    for _w in _words:
        _LANGS_OF[_w] = (*_LANGS_OF.get(_w, ()), _lang)

# What may stand around a prose word: quotes, brackets, emphasis and sentence marks. A word
# with anything else in it or around it is a piece of a path, a link, a hyphenated name or
# code (`bare-metal`, `../er/`, `det.value`), not prose: Russian notes full of `bare-metal`
# links were taken for Norwegian by its `bare`.
_AROUND_WORDS = "\"'«»“”„()[]{}*_.,;:!?"
# Runs of letters of the Latin script (Basic Latin, Latin-1, Latin Extended A and B,
# Additional), and of any other.
_LATIN = re.compile(r"[a-z\u00c0-\u024f\u1e00-\u1eff]+")
_OTHER = re.compile(r"[^\W\d_a-z\u00c0-\u024f\u1e00-\u1eff]+")


def stored_language(value: object) -> str:
    """A passage's language as read back from an index: one of `LANGUAGES`, else English
    (an index memo did not write, or one written over, may hold anything there)."""
    return value if isinstance(value, str) and value in LANGUAGES else ENGLISH


def latin_language(text: str, otherwise: str = ENGLISH) -> str:
    """The Snowball language `text`'s Latin-script words are stemmed in: the one its
    function words clearly say (see the module's docstring), else `otherwise` (a passage's
    note's language: a short passage says too little)."""
    return _Signal.of(text).said() or otherwise


def passage_languages(passages: Sequence[str]) -> list[str]:
    """The language of each of a note's passages' Latin words: its own where its function
    words say it, else its note's (all of them together; English where they say nothing):
    a short passage, a list of terms, a table, says too little, and its note says more.
    A note none of whose words stands alone as another language's function word is English
    without counting (English and Russian notes, most of what memo indexes: one in 100 of
    office-dev's has such a word, `come`, `care`, `je`)."""
    # As written, not lowercased: such words stand in lower case between any sentence's
    # first and last.
    if all(_NOT_ENGLISH.isdisjoint(p.split()) for p in passages):
        return [ENGLISH] * len(passages)
    signals = [_Signal.of(p) for p in passages]
    note = sum(signals, _Signal()).said() or ENGLISH
    return [s.said() or note for s in signals]


@dataclass
class _Signal:
    """What a text's words say of its language: each language's function words in it, and
    the text (lowercased), whose letters are counted by script only where a language other
    than English wins (a note's is the sum of its passages')."""

    hits: Counter[str] = field(default_factory=Counter)
    texts: tuple[str, ...] = ()

    @classmethod
    def of(cls, text: str) -> _Signal:
        low = text.lower()
        prose = (w for token in low.split() if (w := token.strip(_AROUND_WORDS)) in _LANGS_OF)
        return cls(Counter(lang for w in prose for lang in _LANGS_OF[w]), (low,))

    def __add__(self, more: _Signal) -> _Signal:
        return _Signal(self.hits + more.hits, self.texts + more.texts)

    def said(self) -> str | None:
        """The language the function words clearly say (English where there are MIN_HITS
        English ones and no other language wins), or None where they say too little."""
        english = self.hits[ENGLISH]
        ranked = [(n, lang) for lang, n in self.hits.most_common(3) if lang != ENGLISH]
        n, lang = ranked[0] if ranked else (0, ENGLISH)
        second = ranked[1][0] if len(ranked) > 1 else 0
        if n >= MIN_HITS and n >= ENGLISH_MARGIN * english and n > second:
            # Latin words in a text written mostly in another script (Russian prose) are
            # names, commands and code: English, as memo has always stemmed them.
            return ENGLISH if self._letters(_OTHER) > self._letters(_LATIN) else lang
        return ENGLISH if english >= MIN_HITS else None

    def _letters(self, script: re.Pattern[str]) -> int:
        return sum(len(run) for text in self.texts for run in script.findall(text))
