"""What the formatting layer writes: hits, notices, statuses, changes, notes read,
refreshes; `key: (Russian, English)`. The Russian texts the MCP contract quotes are exactly
as it quotes them. Layout (`path:line  heading`, the parentheses around a notice, the
commas between a status's parts) is the formatter's; the words are here."""

from __future__ import annotations

TEXTS: dict[str, tuple[str, str]] = {
    # -- a search's answer ---------------------------------------------------------------
    "hits.none": ("ничего не найдено", "nothing found"),
    # A page asked for past the last hit (`offset`): the hits are on earlier pages.
    "hits.none_past": (
        "дальше ничего: всего найдено {total}, с offset 0",
        "nothing further: {total} found in all, from offset 0",
    ),
    # No hit while indexing goes on: not the final answer.
    "hits.none_yet_files": (
        "пока ничего не найдено среди проиндексированных {done} из {total} файлов",
        "nothing found yet among the {done} of {total} files indexed so far",
    ),
    "hits.none_yet_uncounted": (
        "пока ничего не найдено среди уже проиндексированных файлов",
        "nothing found yet among the files indexed so far",
    ),
    "hits.none_yet_vectors": (
        "пока ничего не найдено: по смыслу искали в {done} из {total} фрагментов",
        "nothing found yet: {done} of {total} chunks could be searched by meaning so far",
    ),
    "hits.none_yet_no_vectors": (
        "пока ничего не найдено по словам; векторов ещё нет ни у одного из {total} фрагментов",
        "nothing found by words yet; no chunk of {total} has vectors so far",
    ),
    "hits.none_yet_model": (
        "пока ничего не найдено по словам; по смыслу искать можно будет, когда установится модель",
        "nothing found by words yet; search by meaning comes once the model is installed",
    ),
    "hits.shown_one": ("показан {first}", "hit {first} shown"),
    "hits.shown_range": ("показаны {first}–{last}", "hits {first}–{last} shown"),
    "hits.also_in": ("то же в: {paths}", "the same in: {paths}"),
    "hits.more": (
        "{shown}; есть ещё: следующая страница — offset {offset}",
        "{shown}; there are more: the next page is offset {offset}",
    ),
    "notice.rebuilding": (
        "индекс перестраивается; ответ по прежнему индексу",
        "the index is being rebuilt; answered from the previous one",
    ),
    "notice.rebuilding_files": (
        "индекс перестраивается (файлов {done} из {total}); ответ по прежнему индексу",
        "the index is being rebuilt ({done} of {total} files); answered from the previous one",
    ),
    "notice.rebuilding_vectors": (
        "индекс перестраивается (векторы {done} из {total} фрагментов); ответ по прежнему индексу",
        "the index is being rebuilt (vectors of {done} of {total} chunks); answered from the "
        "previous one",
    ),
    "notice.busy": (
        "индекс обновляется другим процессом; ответ по последнему снимку",
        "another process is updating the index; answered from its last snapshot",
    ),
    "notice.busy_vectors": (
        "индекс обновляется другим процессом: векторы пока у {done} из {total} фрагментов; "
        "ответ по последнему снимку",
        "another process is updating the index: {done} of {total} chunks have vectors so "
        "far; answered from its last snapshot",
    ),
    "notice.other_model": (
        "векторы индекса от другой модели; там ответ по словам",
        "the index's vectors are another model's; answered by words there",
    ),
    "notice.unreadable_folder": (
        "папку {detail} не прочитать; её заметки оставлены в индексе как были",
        "folder {detail} cannot be read; its notes are kept in the index as they were",
    ),
    "notice.refresh_failed": (
        "обновление индекса не удалось ({detail}); ответ по последнему снимку",
        "updating the index failed ({detail}); answered from its last snapshot",
    ),
    "notice.refresh_failed_in": (
        "не удалось обновить индексы папок: {total} ({named}): {why}; ответ по последним снимкам",
        "updating the indexes failed in folders: {total} ({named}): {why}; answered from their "
        "last snapshots",
    ),
    "notice.indexing": (
        "индексация: {done} из {total} файлов; ответ по уже проиндексированным",
        "indexing: {done} of {total} files; answered from those indexed so far",
    ),
    "notice.indexing_uncounted": (
        "индексация: файлы ещё считаются; ответ по уже проиндексированным",
        "indexing: the files are still being counted; answered from those indexed so far",
    ),
    "notice.not_indexed": (
        "пропущено папок с заметками без индекса: {total} ({named}); memo сам не создаёт "
        "столько индексов: ищите в одной из них или проиндексируйте все: `{command}`",
        "folders of notes without an index left alone: {total} ({named}); memo does not "
        "make that many indexes by itself: search one of them, or index them all: `{command}`",
    ),
    "notice.not_searched": (
        "не прочитано папок: {total} ({named}): {why}",
        "folders not searched: {total} ({named}): {why}",
    ),
    "notice.embedding": (
        "векторы: {done} из {total} фрагментов; поиск по смыслу пока по части заметок",
        "vectors: {done} of {total} chunks; search by meaning covers part of the notes so far",
    ),
    "notice.embedding_none": (
        "векторов пока нет ни у одного из {total} фрагментов; ответ по словам",
        "no chunk has vectors yet ({total}); answered by words",
    ),
    "notice.sentences": (
        "векторы предложений: {done} из {total} фрагментов; уточнение первой страницы пока "
        "по части заметок",
        "sentence vectors: {done} of {total} chunks; the first page is refined over part of "
        "the notes so far",
    ),
    "notice.rebuilt_settings": (
        "индекс перестроен заново: изменились параметры ({detail})",
        "the index was rebuilt from scratch: its settings changed ({detail})",
    ),
    "notice.rebuilt_because": (
        "индекс перестроен заново: {detail}",
        "the index was rebuilt from scratch: {detail}",
    ),
    "notice.rebuilt_version": (
        "индекс перестроен заново: индекс от прежней версии memo",
        "the index was rebuilt from scratch: it was made by an earlier memo",
    ),
    # Why a file was skipped, or that it was cut (`memo index`, `memo://status`).
    "filenote.empty": ("пуст: искать нечего", "empty: nothing to search"),
    "filenote.binary": ("пропущен: двоичные данные", "skipped: binary data"),
    "filenote.unreadable": ("пропущен: не прочитать", "skipped: unreadable"),
    "filenote.special": ("пропущен: не обычный файл", "skipped: not a regular file"),
    "filenote.cut": ("обрезан: проиндексирован лишь частично", "cut: indexed only in part"),
    # --explain: why a hit ranks where it does (4 significant digits).
    "explain.words": (
        "слова: BM25 {bm25:.4g} × название {naming:.4g} + близость {proximity:.4g}, "
        "× масштаб {scale:.4g} = {lex:.4g}",
        "words: BM25 {bm25:.4g} × title {naming:.4g} + proximity {proximity:.4g}, "
        "× scale {scale:.4g} = {lex:.4g}",
    ),
    "explain.words_none": ("слова: не нашли", "words: not found"),
    "explain.meaning": ("смысл: косинус {vec:.4g}", "meaning: cosine {vec:.4g}"),
    "explain.meaning_none": ("смысл: не нашли", "meaning: not found"),
    "explain.why": ("почему: {what}", "why: {what}"),
    "explain.one_side": ("итог {score:.4g}; {side}", "score {score:.4g}; {side}"),
    "explain.hybrid": (
        "итог {score:.4g} = {lex_weight:.4g} × слова {lex:.4g} + {weight:.4g} × "
        "смысл {vec:.4g}; {words}; {meaning}; вес смысла {weight:.4g} {origin}",
        "score {score:.4g} = {lex_weight:.4g} × words {lex:.4g} + {weight:.4g} × "
        "meaning {vec:.4g}; {words}; {meaning}; meaning's weight {weight:.4g} {origin}",
    ),
    "explain.second_look": (
        "итог {score:.4g} = место {placed:.4g} + второй взгляд {gain:.4g} (лучшее "
        "предложение: косинус {sentence}); до него: {before}",
        "score {score:.4g} = place {placed:.4g} + second look {gain:.4g} (best sentence: "
        "cosine {sentence}); before it: {before}",
    ),
    "explain.by_strength": ("по силе слов {strength:.4g}", "by the words' strength {strength:.4g}"),
    "explain.constant": ("постоянный", "constant"),
    # -- status, refresh, reindex, watch -------------------------------------------------
    "time.never": ("нет", "never"),
    "status.head": (
        "{root}: файлов {files}, чанков {chunks}, индекс {updated}",
        "{root}: files {files}, chunks {chunks}, index {updated}",
    ),
    "status.pending": ("ещё не проиндексировано {n}", "not indexed yet {n}"),
    "status.empty": ("пустых {n}", "empty {n}"),
    "status.skipped": ("пропущено файлов {n}", "files skipped {n}"),
    "status.no_vectors": ("без векторов {n}", "without vectors {n}"),
    "status.no_sentences": ("без векторов предложений {n}", "without sentence vectors {n}"),
    "status.model": ("векторы модели {model}", "vectors by {model}"),
    "status.unreadable_folders": ("нечитаемых папок {n}", "unreadable folders {n}"),
    "status.ignored": ("игнорируется {n}", "ignored {n}"),
    "status.indexing": ("идёт индексация", "indexing under way"),
    "status.indexing_count": (
        "идёт индексация: {done} из {total} файлов",
        "indexing under way: {done} of {total} files",
    ),
    "status.embedding": ("идёт расчёт векторов", "vectors being computed"),
    "status.embedding_count": (
        "идёт расчёт векторов: {done} из {total} фрагментов",
        "vectors being computed: {done} of {total} chunks",
    ),
    "status.sentences": ("идёт расчёт векторов предложений", "sentence vectors being computed"),
    "status.sentences_count": (
        "идёт расчёт векторов предложений: {done} из {total} фрагментов",
        "sentence vectors being computed: {done} of {total} chunks",
    ),
    "status.rebuilding": (
        "идёт перестройка индекса (пока отвечает прежний)",
        "the index is being rebuilt (the previous one answers meanwhile)",
    ),
    "status.rebuilding_files": (
        "идёт перестройка индекса: файлов {done} из {total} (пока отвечает прежний)",
        "the index is being rebuilt: {done} of {total} files (the previous one answers meanwhile)",
    ),
    "status.rebuilding_vectors": (
        "идёт перестройка индекса: векторы {done} из {total} фрагментов (пока отвечает прежний)",
        "the index is being rebuilt: vectors of {done} of {total} chunks (the previous one "
        "answers meanwhile)",
    ),
    "status.refresh_failed": ("обновление не удалось ({reason})", "update failed ({reason})"),
    "status.tail": (
        "отпечаток {fingerprint}, проверено {checked}",
        "fingerprint {fingerprint}, checked {checked}",
    ),
    "watch.update": (
        "{path}: новых {added}, изменённых {changed}, удалённых {deleted}; векторов "
        "{embedded} ({seconds:.2f} с)",
        "{path}: {added} new, {changed} changed, {deleted} deleted; {embedded} vectors "
        "({seconds:.2f} s)",
    ),
    # -- what changed since a fingerprint -------------------------------------------------
    "changes.delta": (
        "изменения с {since}: добавлено {added}, изменено {changed}, удалено {removed}",
        "changes since {since}: {added} added, {changed} changed, {removed} removed",
    ),
    "changes.all_unknown": (
        "отпечаток {since} неизвестен или устарел, поэтому все заметки: {files}",
        "fingerprint {since} is unknown or too old, so every note: {files}",
    ),
    "changes.all": ("все заметки: {files}", "every note: {files}"),
    "changes.now": (
        "{head}; отпечаток сейчас {fingerprint}",
        "{head}; the fingerprint now is {fingerprint}",
    ),
    # -- a note read ---------------------------------------------------------------------
    "read.lines": (
        "{where}: строки {first}–{last} из {total}",
        "{where}: lines {first}–{last} of {total}",
    ),
    "read.from": ("с {first}", "from {first}"),
    "read.asked_past_end": (
        "{head} (просили {asked}: дальше конец заметки)",
        "{head} (asked for {asked}: the note ends before)",
    ),
    "read.beyond": (
        "{where}: за концом заметки (просили {asked}, а строк в ней {total})",
        "{where}: past the note's end (asked for {asked}, and it has {total} lines)",
    ),
    "read.empty": ("{where}: заметка пуста", "{where}: the note is empty"),
    "read.cut": (
        "{head}; заметка обрезана: прочитаны первые {kept} из {size} байт",
        "{head}; the note is cut: its first {kept} of {size} bytes were read",
    ),
    "read.cut_line": (
        "<!-- memo: здесь обрезано, первые {kept} из {size} байт; остальное в {where} -->",
        "<!-- memo: cut here, the first {kept} of {size} bytes; the rest is in {where} -->",
    ),
    "notice.model_unavailable": (
        "модель недоступна ({detail}); ответ только по словам",
        "no model ({detail}); answered by words only",
    ),
    "reindex.done": ("переиндексировано файлов: {files}", "files reindexed: {files}"),
    "refresh.done": (
        "файлов: новых {added}, изменённых {changed}, удалённых {deleted}; фрагментов "
        "записано {written}, получили векторы {vectored} (посчитано разных текстов: "
        "{embedded}); {seconds:.1f} с",
        "files: {added} new, {changed} changed, {deleted} deleted; {written} passages "
        "written, {vectored} given vectors ({embedded} distinct texts embedded); "
        "{seconds:.1f} s",
    ),
}
