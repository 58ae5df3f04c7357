"""What the engine says about folders, notes, searches, indexes and settings:
`key: (Russian, English)`. A text ends without a period: it may be put inside another."""

from __future__ import annotations

TEXTS: dict[str, tuple[str, str]] = {
    # A sentence raised as it is, not yet in the catalogue (tests/stories/test_catalogue.py
    # finds it).
    "as_given": ("{text}", "{text}"),
    # -- paths the user gave -------------------------------------------------------------
    "path.empty": (
        "путь пуст: укажите папку с заметками, например ~/notes",
        "path is empty: give the folder of your notes, e.g. ~/notes",
    ),
    "path.missing": (
        "путь не существует: {path}; укажите существующую папку с заметками, например ~/notes",
        "path does not exist: {path}; give an existing folder of notes, e.g. ~/notes",
    ),
    "path.not_dir": (
        "это не папка: {path}; укажите папку, в которой лежат заметки",
        "not a directory: {path}; give the folder that holds the notes",
    ),
    "path.no_notes": (
        "в {path} нет заметок: ни одного файла *.md на глубине до {depth} папок; "
        "укажите memo папку, в которой лежат ваши заметки Markdown",
        "no notes found in {path}: no *.md file within {depth} folder levels; "
        "point memo at the folder that holds your Markdown notes",
    ),
    "path.no_notes_deeper": (
        "в {path} нет заметок: ни одного файла *.md на глубине до {depth} папок; "
        "ближайшие заметки лежат в {deeper}: укажите memo эту папку",
        "no notes found in {path}: no *.md file within {depth} folder levels; "
        "the nearest notes are in {deeper}: point memo at that folder",
    ),
    "path.none_indexed": (
        "ни в одной из {total} папок с заметками в {path} нет индекса ({named}), а memo сам "
        "создаёт не больше {most} новых: ищите в одной из них или сначала проиндексируйте "
        "все: `{command}`",
        "none of the {total} folders of notes in {path} has an index ({named}), and memo "
        "makes at most {most} new ones by itself: search one of them, or index them all "
        "first with `{command}`",
    ),
    "path.outside": (
        "{path} лежит вне папок, которые memo разрешено использовать ({roots}); "
        "добавьте её через MEMO_ROOTS или --root при запуске memo-mcp",
        "{path} is outside the folders memo may use ({roots}); "
        "add it with MEMO_ROOTS or --root when starting memo-mcp",
    ),
    "path.root_unresolved": (
        "разрешённую папку {raw!r} не удаётся найти: {reason}",
        "allowed root {raw!r} cannot be resolved: {reason}",
    ),
    "path.changed_resolving": (
        "{path} изменился, пока memo разбирал путь; попробуйте ещё раз",
        "{path} changed while memo was resolving it; try again",
    ),
    "path.gone": (
        "{path} больше не существует: папку переместили или удалили",
        "{path} no longer exists: it was moved or removed",
    ),
    "path.changed_link": (
        "{path} изменился, пока memo с ним работал: папка на пути стала символической "
        "ссылкой или перестала быть папкой, а memo туда не переходит; повторите поиск",
        "{path} changed while memo was using it: a folder on its path is now a "
        "symbolic link or not a folder, and memo does not follow it there; search again",
    ),
    "path.cannot_open": ("не удаётся открыть {path}: {reason}", "cannot open {path}: {reason}"),
    # -- the OS --------------------------------------------------------------------------
    "setting.number": (
        "{variable}={raw!r}: укажите число от {low:g} до {high:g}",
        "{variable}={raw!r}: give a number from {low:g} to {high:g}",
    ),
    "os.disk_read_only": (
        "{path} на файловой системе только для чтения: записать нельзя; индекс цел, ответы "
        "идут по последнему сохранённому",
        "{path} is on a read-only file system: nothing can be written; the index is whole, "
        "and answers come from what it last saved",
    ),
    "os.disk_full": (
        "на диске нет места для {path}: освободите место; индекс цел, ответы идут по "
        "последнему сохранённому",
        "no room left on the disk for {path}: free some space; the index is whole, and "
        "answers come from what it last saved",
    ),
    "os.out_of_files": (
        "слишком много открытых файлов, чтобы работать с {path}: memo держит по нескольку "
        "на каждую папку поиска; ищите в меньшем числе папок сразу или поднимите предел "
        "(ulimit -n)",
        "too many files open to use {path}: memo keeps a few per folder it searches; "
        "search fewer folders at once, or raise the limit (ulimit -n)",
    ),
    "os.unsupported": (
        "в этой системе ({platform}) нет дескрипторов папок (openat, O_NOFOLLOW), через "
        "которые memo читает каждую заметку: запустите memo в WSL (Windows Subsystem for "
        "Linux), в Linux или macOS",
        "this system ({platform}) has no folder descriptors (openat, O_NOFOLLOW), "
        "through which memo reads every note: run memo in WSL (Windows Subsystem for "
        "Linux), or on Linux or macOS",
    ),
    # The English is the C library's own (what the OS says, and said before).
    "os.denied": ("нет доступа", "Permission denied"),
    "os.missing": ("нет такого файла или папки", "No such file or directory"),
    "os.not_dir": ("не папка", "Not a directory"),
    "os.is_dir": ("это папка", "Is a directory"),
    "os.io": ("ошибка ввода-вывода", "Input/output error"),
    "os.full": ("на диске нет места", "No space left on device"),
    "os.read_only": ("файловая система только для чтения", "Read-only file system"),
    "os.loop": ("слишком много символических ссылок", "Too many levels of symbolic links"),
    "os.name_too_long": ("слишком длинное имя", "File name too long"),
    "os.too_many_files": ("слишком много открытых файлов", "Too many open files"),
    "os.exists": ("файл уже существует", "File exists"),
    # -- notes read by path --------------------------------------------------------------
    "note.relative": (
        "укажите путь заметки относительно коллекции, например home/backup.md",
        "give the note's path relative to the collection, e.g. home/backup.md",
    ),
    "note.outside": ("{note} ведёт за пределы {where}", "{note} leads outside {where}"),
    "note.missing": ("нет такой заметки: {note} в {where}", "no such note: {note} in {where}"),
    "note.unreadable": ("{note} не прочитать: {reason}", "{note} cannot be read: {reason}"),
    "note.not_markdown": (
        "{note} — не заметка Markdown (*.md) вне скрытых папок: memo открывает только заметки",
        "{note} is not a Markdown note (*.md) outside hidden folders: memo opens notes only",
    ),
    "note.ignored": (
        "{note} исключена правилами .gitignore или .memoignore в {where}: memo открывает "
        "только те заметки, что индексирует",
        "{note} is left out by .gitignore or .memoignore rules in {where}: "
        "memo opens only the notes it indexes",
    ),
    "read.line_number": (
        "{name} — номер строки, от 1 (строки считаются с 1), а дано {got!r}",
        "{name} must be a line number, 1 or more (lines count from 1), got {got!r}",
    ),
    "read.around_and_span": (
        "укажите либо строку, вокруг которой читать, либо from и to, но не то и другое",
        "give either a line to read around or from and to, not both",
    ),
    "read.span_reversed": (
        "from {first} позже, чем to {last}: сначала первая строка, например from {last} to {first}",
        "from {first} is after to {last}: give the first line first, e.g. from {last} to {first}",
    ),
    "read.line_given": (
        "{note} уже называет строку: не указывайте from, to и around",
        "{note} names its line already: leave out from, to and around",
    ),
    # -- a search's arguments ------------------------------------------------------------
    "search.mode": (
        "неизвестный режим {mode!r}: возможны {modes}",
        "unknown mode {mode!r}: use one of {modes}",
    ),
    "search.whole_range": (
        "{name} — целое число от {low} до {high}, а дано {got!r}",
        "{name} must be a whole number from {low} to {high}, got {got!r}",
    ),
    "search.empty_query": (
        "запрос пуст: напишите, что искать",
        "the query is empty: say what to look for",
    ),
    "search.scope_type": (
        "scope должен быть Scope (Scope.parse), а дано {got!r}",
        "scope must be a Scope (Scope.parse), got {got!r}",
    ),
    "search.vec_needs_model": (
        "поиску по смыслу нужна модель ({reason}); используйте режим lex или hybrid",
        "vector search needs a model ({reason}); use mode lex or hybrid",
    ),
    "scope.date_help": (
        "напишите дату ISO (2024-05-01 — целый день по местному времени) или дату и время "
        "(2024-05-01T14:30 — местное время, если в конце нет Z или +02:00)",
        "write an ISO date (2024-05-01, a whole day in local time) or date and time "
        "(2024-05-01T14:30, local time unless it ends in Z or +02:00)",
    ),
    "scope.after_before": (
        "after ({after}) позже, чем before ({before}): ни одна заметка не подойдёт; "
        "поменяйте их местами",
        "after ({after}) is later than before ({before}): no note can match; swap them",
    ),
    "scope.nul": (
        "{name} содержит нулевой байт: его нет ни в одном имени, теге или дате; уберите его",
        "{name} holds a NUL byte: no name, tag or date holds one; remove it",
    ),
    "scope.under_long": (
        "under — папка или шаблон не длиннее {most} символов, например projects или journal/2024-*",
        "under must be a folder or glob of at most {most} characters, "
        "e.g. projects or journal/2024-*",
    ),
    "scope.under_absolute": (
        "under {under!r} — не относительный путь: укажите его относительно пути поиска, "
        "например projects или journal/2024-*",
        "under {under!r} is not relative: give it relative to the path searched, "
        "e.g. projects or journal/2024-*",
    ),
    "scope.under_up": (
        "under {under!r} выходит за путь поиска ('..'): ищите в папке выше",
        "under {under!r} leaves the path searched ('..'): search the folder above instead",
    ),
    "scope.under_glob": (
        "under {under!r} — шаблон, которому не подойдёт ни один путь (незакрытая '[' или "
        "'\\' в конце): пишите '\\[' для буквальной '[', например notes/\\[draft\\]*",
        "under {under!r} is not a glob any path can match (an unclosed '[' or a "
        "trailing '\\'): write '\\[' for a literal '[', e.g. notes/\\[draft\\]*",
    ),
    "scope.tags_many": (
        "не больше {most} тегов в одном поиске, а дано {got}",
        "at most {most} tags in one search, got {got}",
    ),
    "scope.not_a_tag": (
        "не тег: {tag!r}: укажите тег вроде work или #project/memo (без пробелов)",
        "not a tag: {tag!r}: give a tag such as work or #project/memo (no spaces)",
    ),
    "scope.date_long": (
        "{name}: не дата ({chars} символов); {help}",
        "{name}: not a date ({chars} characters); {help}",
    ),
    "scope.not_a_date": (
        "{name}: {value!r} — не дата; {help}",
        "{name}: {value!r} is not a date; {help}",
    ),
    "scope.date_range": (
        "{name}: {value} — вне допустимого диапазона; {help}",
        "{name}: {value} is out of range; {help}",
    ),
    # -- indexes -------------------------------------------------------------------------
    "index.busy": (
        "индекс {path} занят другим процессом; попробуйте чуть позже",
        "the index {path} is busy in another process; try again shortly",
    ),
    "index.failed": (
        "сбой индекса {path}: {reason}; выполните `memo reindex {root}`",
        "the index {path} failed: {reason}; run `memo reindex {root}`",
    ),
    "index.wal_unreadable": (
        "{path}: последнее сохранённое состояние неизвестно (его WAL не прочитать без "
        "записи); выполните `memo index` для этой коллекции",
        "{path}: last committed state unknown (its WAL cannot be read without "
        "writing); run `memo index` on the collection",
    ),
    "index.no_wal": (
        "журнал WAL не работает в {folder}",
        "WAL journaling does not work in {folder}",
    ),
    "index.kept_changing": (
        "{path} всё время менялся, пока его читали; попробуйте ещё раз",
        "{path} kept changing while it was read; try again",
    ),
    "index.cannot_open": ("не удаётся открыть {path}: {reason}", "cannot open {path}: {reason}"),
    "index.cannot_create": (
        "не удаётся создать {path}: {reason}",
        "cannot create {path}: {reason}",
    ),
    "index.cannot_write": (
        "не удаётся записать {path}: {reason}",
        "cannot write {path}: {reason}",
    ),
    "index.cannot_read": ("не удаётся прочитать {path}: {reason}", "cannot read {path}: {reason}"),
    "index.cannot_rebuild": (
        "не удаётся перестроить {path}: {reason}; уберите его и перестройте",
        "cannot rebuild {path}: {reason}; move it away and rebuild",
    ),
    "index.newer": (
        "{path} создан более новой версией memo (схема {version} > {ours}); обновите memo "
        "или уберите {folder}, чтобы эта версия построила индекс заново",
        "{path} was made by a newer memo (schema {version} > {ours}); "
        "upgrade memo, or move {folder} away to rebuild it with this one",
    ),
    "index.bad_row": (
        "в нём была запись, которую memo не пишет: {row}",
        "it held a row memo never writes: {row}",
    ),
    "index.foreign": (
        "{path} — не индекс memo; memo его не трогает",
        "{path} is not a memo index; memo leaves it alone",
    ),
    "index.damaged": (
        "не удаётся открыть индекс {path}: {reason}; он повреждён или не от memo: уберите "
        "{folder} и повторите поиск, чтобы построить его заново",
        "cannot open the index {path}: {reason}; it is damaged or not memo's: "
        "move {folder} away and search again to rebuild it",
    ),
    "index.changed_opening": (
        "{path} изменился, пока memo открывал свой индекс (папку на пути подменили): "
        "ничего не прочитано и не записано; повторите поиск",
        "{path} changed while memo was opening its index (a folder on the "
        "way was swapped): nothing was read from or written to what it led to; search again",
    ),
    "index.unix_vfs": (
        "memo проверяет свой индекс только через unix VFS SQLite",
        "memo checks its index only through SQLite's unix VFS",
    ),
    # Where an index lives, and the files at memo's names that are not memo's.
    "place.could_not_hold": (
        "папка коллекции не смогла его вместить",
        "the collection folder could not hold it",
    ),
    "place.not_utf8": (
        "путь папки не в UTF-8, а SQLite такой не открывает",
        "the folder's path is not UTF-8, which SQLite cannot open",
    ),
    "place.unreadable": ("{path}: {reason}", "{path}: {reason}"),
    "place.through": (
        "{path} {what}: memo не пишет через него",
        "{path} {what}: memo does not write through it",
    ),
    "place.no_lock": (
        "{path} {what}: memo его не блокирует",
        "{path} {what}: memo does not lock it",
    ),
    "file.is": ("{path} {what}", "{path} {what}"),
    "file.left_alone": ("{why}; memo его не трогает", "{why}; memo leaves it alone"),
    "file.symlink": ("— символическая ссылка", "is a symbolic link"),
    "file.not_regular": ("— не обычный файл", "is not a regular file"),
    "file.not_folder": ("— не папка", "is not a folder"),
    "file.hard_links": (
        "— файл с другими именами (жёсткими ссылками)",
        "has other names (hard links)",
    ),
    "file.not_sqlite": (
        "— не индекс memo (не база SQLite)",
        "is not a memo index (not a SQLite database)",
    ),
    "file.another_programs": (
        "— не индекс memo (база SQLite другой программы)",
        "is not a memo index (a SQLite database of another program)",
    ),
    "file.not_memos_schema": (
        "— не индекс memo (в нём есть то, чего memo не делает: {extra})",
        "is not a memo index (it holds what memo does not make: {extra})",
    ),
    "file.side_unreadable": (
        "{path} не прочитать ({reason})",
        "{path} cannot be read ({reason})",
    ),
    "file.lock_holds_data": (
        "в {path} есть данные (файл блокировки memo пуст)",
        "{path} holds data (memo's lock file is empty)",
    ),
    "file.side_alone": ("рядом с {path} нет базы", "{path} has no database beside it"),
    "file.not_wal": ("{path} — не файл WAL SQLite", "{path} is not a SQLite WAL file"),
    "file.foreign_journal": (
        "{path} — журнал, оставленный не memo (SQLite проиграл бы его заново)",
        "{path} is a journal that memo did not leave (SQLite would play it back)",
    ),
    # -- settings, the index's place, lists of names -------------------------------------
    "http.empty_token": (
        "{variable} задан, но пуст: запишите в него токен (например, "
        "`{variable}=$(openssl rand -hex 24)`) или уберите его, чтобы работать без токена",
        "{variable} is set but empty: put a token in it (for example "
        "`{variable}=$(openssl rand -hex 24)`), or unset it to serve without a token",
    ),
    "http.token_ascii": (
        "{variable} должен состоять из печатных символов ASCII без пробелов (он передаётся "
        "в заголовке HTTP)",
        "{variable} must be printable ASCII without spaces (it travels in an HTTP header)",
    ),
    "list.and_more": ("{named} и ещё {more}", "{named} and {more} more"),
    "status.kept_in": ("индекс хранится в {path} ({why})", "index kept in {path} ({why})"),
    # -- what the engine logs (stderr): each line a key, worded by the front end ----------
    "log.no_reports": (
        "нет сообщений об изменениях в {root} ({reason}): папка обходится при каждом поиске",
        "no change reports for {root} ({reason}): it is walked at every search",
    ),
    "log.no_reports_here": (
        "нет службы уведомлений ядра, или это не локальная файловая система",
        "no inotify, or not a local file system",
    ),
    "log.reports_lost": (
        "сообщения об изменениях в {root} потеряли след (очередь переполнена, папку "
        "перенесли или наблюдение не удалось): обхожу её целиком",
        "change reports for {root} lost track (queue overflow, a folder moved or a watch "
        "failed): walking it whole",
    ),
    "log.rewatch_failed": (
        "снова наблюдать за {root} не удалось ({reason}): обойду её в следующий раз",
        "watching {root} again failed ({reason}): walking it next time",
    ),
    "log.names_unreported": (
        "изменения в {root} видны под именами, о которых система не сообщает: папка "
        "обходится при каждом поиске",
        "changes in {root} show under names the OS does not report: it is walked at every search",
    ),
    "log.ignore_not_applied": ("{path} не применяется: {why}", "{path} is not applied: {why}"),
    "log.ignore_too_big": ("он больше {limit} байт", "it is over {limit} bytes"),
    "log.ignore_too_many": (
        "вместе с файлами исключений над ним он ввёл бы в силу больше {rules} правил, "
        "{patterns} шаблонов или {complex} шаблонов с двумя звёздочками и больше",
        "with the ignore files above it, it would put more than {rules} rules, {patterns} "
        "wildcard patterns or {complex} with two runs or more in force",
    ),
    "log.refresh_failed": (
        "обновить индекс {path} не удалось: {reason}",
        "refreshing {path} failed: {reason}",
    ),
    "log.refresh_not_stopped": (
        "обновление {path} не остановилось за {seconds:.1f} с; индекс закроется, когда "
        "оно закончится",
        "the refresh of {path} did not stop within {seconds:.1f} s; it closes the index "
        "when it ends",
    ),
}
