"""memo_core.text.passagelang: the language a passage's Latin words are stemmed in, read from
its function words; English unless another clearly has more, and never on what code,
commands and identifiers are made of."""

from __future__ import annotations

import pytest

from memo_core.text.passagelang import ENGLISH, latin_language, passage_languages


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Die Sicherungen werden jede Nacht auf dem zweiten Server abgelegt.", "german"),
        ("Les fichiers sont chiffrés avant la copie, pas sur le serveur.", "french"),
        ("Las copias se guardan cada noche y se borran cuando el disco está lleno.", "spanish"),
        ("Il server è spento, quindi anche questo servizio non può partire.", "italian"),
        ("O servidor não responde, mas também não há erro no registro.", "portuguese"),
        ("De server is niet bereikbaar, maar het netwerk werkt wel.", "dutch"),
        ("Servern är inte nåbar, men nätverket fungerar och det finns ström.", "swedish"),
        ("Serveren er ikke tilgængelig, men der er strøm, og det virker nu.", "danish"),
        (
            "Serveren er ikke tilgjengelig, men nettverket virker, og det er bare strøm.",
            "norwegian",
        ),
        ("Palvelin ei vastaa, mutta verkko toimii ja se on myös nopea.", "finnish"),
        ("Sunucu yanıt vermiyor, ama ağ çok daha hızlı ve bu sorun değil.", "turkish"),
        ("Server tidak merespons, tetapi jaringan sudah berjalan dengan baik.", "indonesian"),
        ("Serverul nu răspunde, dar rețeaua este pornită și funcționează.", "romanian"),
        ("A szerver nem válaszol, de a hálózat már működik, és ez nagyon jó.", "hungarian"),
        ("Server neodpovídá, ale síť už funguje a je také rychlá.", "czech"),
        ("Serwer nie odpowiada, ale sieć już działa i jest także szybka.", "polish"),
        ("El servidor no respon, però la xarxa també funciona i és molt ràpida.", "catalan"),
    ],
)
def test_a_sentence_says_its_language(text: str, lang: str) -> None:
    assert latin_language(text) == lang


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Sicherungen",  # one word says no language
        "Backups run nightly.",
        # English with a few German words in it.
        "We discussed the Sicherung der Daten with the team; it was agreed that the backups "
        "would run from the laptop über the hotel Wi-Fi.",
        # Commands and identifiers that are function words elsewhere (la, du, del, var, de).
        "ls -la /var/log && du -sh . && del tmp.txt; var todo = 1; git log --author de",
        "```python\nimport os\ndef main():\n    for x in os.listdir('.'):\n        del x\n```",
        # Russian prose with Latin identifiers: its Latin words are names and code.
        "Применить манифесты: kubectl apply -f deploy/ и проверить config.yaml; метод "
        "getUserById теперь кэширует ответы, как в con la de des.",
        "Rates were higher in the MIT cohort (Smith et al., 2019), as in the von Willebrand arm.",
    ],
)
def test_english_and_what_says_nothing_stay_english(text: str) -> None:
    assert latin_language(text) == ENGLISH


def test_what_says_too_little_takes_the_language_given() -> None:
    assert latin_language("Sicherungen und Kopien", "german") == "german"
    assert latin_language("", "french") == "french"
    english = "This is an English sentence: you can see that it was written for the team."
    assert latin_language(english, "german") == ENGLISH


def test_code_inside_a_german_note_leaves_it_german() -> None:
    text = (
        "Die Datenbank wird mit diesem Skript gesichert, wenn der Dienst nicht läuft:\n"
        "```bash\nfor db in $(psql -l); do pg_dump $db > /backup/$db.sql; done\n```\n"
        "Danach ist die Sicherung auf dem zweiten Server."
    )
    assert latin_language(text) == "german"


def test_a_short_passage_takes_its_notes_language() -> None:
    passages = [
        "Sicherungen",  # a heading alone
        "Die Datenbanken werden jede Nacht gesichert, und die Sicherungen liegen auf dem "
        "zweiten Server, wenn nichts fehlt. Eine Warnung wird verschickt, wenn eine Sicherung "
        "nicht da ist; dann muss man sie von Hand auf den Server kopieren.",
        "- Datenbanken\n- Tabellen",
        "The English summary of this note, for the team that does not read German.",
    ]
    assert passage_languages(passages) == ["german", "german", "german", ENGLISH]
    assert passage_languages([]) == []
    assert passage_languages(["Backups"]) == [ENGLISH]


@pytest.mark.parametrize(
    "text",
    [
        # A Russian page's links, longer than its prose (VK Cloud's docs): `bare` is a
        # Norwegian function word, here only a piece of a path and of a hyphenated name.
        "Если у вас нет сервера, {linkto(../../bare-metal/manage#bare-metal-order)[text=закажите]}."
        " См. {linkto(../../bare-metal/connect/bare-metal-nix#bare-metal-ssh)[text=bare-metal]}"
        " и {linkto(../../bare-metal/access/bare-metal-public#bare-metal-ip)[text=доступ]}.",
        "Set `der.die.das` and pass und-oder-nicht to ../und/der/die/ and und_der_die.",
    ],
)
def test_function_words_inside_paths_and_names_say_nothing(text: str) -> None:
    assert latin_language(text) == "english"
