"""How each kind of question is asked, in five languages and several wordings each.

Per kind and language there are at least three wordings: one that names the file the answer is in (where a
file is known), one that does not, and one that names the thing by another word. A task picks one from its
seed. Placeholders in braces are filled from the folder (`{config}`, `{key}`, `{symbol}`...); a topic asked
about in words (`{absent}`) is given in the question's language (`TOPICS`).
"""

from __future__ import annotations

from evals.languages import LANGUAGES, Language

Wordings = dict[Language, tuple[str, ...]]

WORDINGS: dict[str, Wordings] = {
    "timeout": {
        "en": (
            "Which file mentions a timeout?",
            "Find the log that records a timeout and tell me its name.",
            "One of these files reports an operation that took too long and gave up. Which one?",
        ),
        "es": (
            "¿Qué archivo menciona un timeout?",
            "Busca el log que registra un tiempo de espera agotado y dime cómo se llama.",
            "Uno de estos ficheros informa de una operación que tardó demasiado y se abandonó. ¿Cuál?",
        ),
        "de": (
            "Welche Datei erwähnt einen Timeout?",
            "Finde das Log, das eine Zeitüberschreitung verzeichnet, und nenne seinen Namen.",
            "Eine dieser Dateien meldet einen Vorgang, der zu lange dauerte und abgebrochen wurde. Welche?",
        ),
        "zh": (
            "哪个文件提到了超时（timeout）？",
            "找出记录了超时的日志，告诉我它的文件名。",
            "其中一个文件报告了某个操作等待太久而放弃。是哪一个？",
        ),
        "ru": (
            "Какой файл упоминает тайм-аут (timeout)?",
            "Найди лог, в котором записан таймаут, и скажи, как он называется.",
            "В одном из этих файлов сообщается об операции, которая длилась слишком долго и была прервана. В каком?",
        ),
    },
    "count": {
        "en": (
            "How many files are in this folder?",
            "Count the files here, subfolders included.",
            "What is the total number of documents in the project, counting every subdirectory?",
        ),
        "es": (
            "¿Cuántos archivos hay en esta carpeta?",
            "Cuenta los ficheros de aquí, incluidas las subcarpetas.",
            "¿Cuál es el número total de documentos del proyecto, contando todos los subdirectorios?",
        ),
        "de": (
            "Wie viele Dateien liegen in diesem Ordner?",
            "Zähle die Dateien hier, Unterordner eingeschlossen.",
            "Wie viele Dokumente hat das Projekt insgesamt, alle Unterverzeichnisse mitgezählt?",
        ),
        "zh": (
            "这个文件夹里一共有多少个文件？",
            "数一数这里的文件，包括子文件夹里的。",
            "整个项目（包括所有子目录）总共有多少份文档？",
        ),
        "ru": (
            "Сколько файлов в этой папке?",
            "Посчитай файлы здесь, включая подпапки.",
            "Сколько всего документов в проекте, считая все подкаталоги?",
        ),
    },
    "quote": {
        "en": (
            "Read {notes} and tell me what it says.",
            "What is written in {notes}?",
            "Give me the exact text of the note kept in {notes}, word for word.",
        ),
        "es": (
            "Lee {notes} y dime qué dice.",
            "¿Qué está escrito en {notes}?",
            "Dame el texto exacto de la nota guardada en {notes}, palabra por palabra.",
        ),
        "de": (
            "Lies {notes} und sag mir, was darin steht.",
            "Was steht in {notes}?",
            "Gib mir den genauen Wortlaut der Notiz in {notes}.",
        ),
        "zh": (
            "读一下 {notes}，告诉我里面写了什么。",
            "{notes} 里写的是什么？",
            "请逐字给出 {notes} 中那条笔记的原文。",
        ),
        "ru": (
            "Прочитай {notes} и скажи, что там написано.",
            "Что написано в {notes}?",
            "Приведи дословно текст заметки из {notes}.",
        ),
    },
    "largest": {
        "en": (
            "Which file is the largest?",
            "What is the biggest file here?",
            "Which file takes up the most space on disk?",
        ),
        "es": (
            "¿Cuál es el archivo más grande?",
            "¿Qué fichero es el mayor de todos?",
            "¿Qué archivo ocupa más espacio en disco?",
        ),
        "de": (
            "Welche Datei ist die größte?",
            "Was ist die größte Datei hier?",
            "Welche Datei belegt am meisten Speicherplatz?",
        ),
        "zh": ("哪个文件最大？", "这里体积最大的文件是哪个？", "哪个文件占用的磁盘空间最多？"),
        "ru": (
            "Какой файл самый большой?",
            "Какой файл здесь крупнее всех?",
            "Какой файл занимает больше всего места на диске?",
        ),
    },
    "rotation": {
        "en": (
            "Does any file talk about log rotation? Which one?",
            "Is log rotation mentioned anywhere? Name the file.",
            "Is there a note about rotating the logs so they do not fill the disk? Where?",
        ),
        "es": (
            "¿Algún archivo habla de la rotación de logs (log rotation)? ¿Cuál?",
            "¿Se menciona en algún sitio la rotación de logs? Di el fichero.",
            "¿Hay alguna nota sobre rotar los registros para que no llenen el disco? ¿Dónde?",
        ),
        "de": (
            "Spricht eine Datei über Log-Rotation (log rotation)? Welche?",
            "Wird die Rotation der Logs irgendwo erwähnt? Nenne die Datei.",
            "Gibt es eine Notiz dazu, die Protokolle zu rotieren, damit sie die Platte nicht füllen? Wo?",
        ),
        "zh": (
            "有没有文件提到日志轮转（log rotation）？是哪个？",
            "哪里提到了日志轮转？请说出文件名。",
            "有没有关于轮换日志、以免占满磁盘的记录？在哪个文件里？",
        ),
        "ru": (
            "Есть ли файл про ротацию логов (log rotation)? Какой?",
            "Упоминается ли где-нибудь ротация логов? Назови файл.",
            "Есть ли заметка о том, чтобы ротировать журналы, пока они не заполнили диск? Где?",
        ),
    },
    "absent": {
        "en": (
            "Does any file mention {absent}?",
            "Is {absent} reported anywhere in these files?",
            "Which file talks about {absent}?",
        ),
        "es": (
            "¿Algún archivo menciona {absent}?",
            "¿Se informa de {absent} en alguno de estos ficheros?",
            "¿Qué archivo habla de {absent}?",
        ),
        "de": (
            "Erwähnt irgendeine Datei {absent}?",
            "Wird in einer dieser Dateien über {absent} berichtet?",
            "Welche Datei spricht über {absent}?",
        ),
        "zh": ("有文件提到{absent}吗？", "这些文件里有没有报告过{absent}？", "哪个文件讲到了{absent}？"),
        "ru": (
            "Есть ли файл, в котором говорится {absent}?",
            "Сообщается ли где-нибудь в этих файлах {absent}?",
            "Какой файл рассказывает {absent}?",
        ),
    },
    "config": {
        "en": (
            "What is {key} set to in {config}?",
            "What value does the {key} setting have?",
            "In {config}, which number is configured for {key}?",
        ),
        "es": (
            "¿A qué valor está fijado {key} en {config}?",
            "¿Qué valor tiene el ajuste {key}?",
            "En {config}, ¿qué número está configurado para {key}?",
        ),
        "de": (
            "Auf welchen Wert ist {key} in {config} gesetzt?",
            "Welchen Wert hat die Einstellung {key}?",
            "Welche Zahl ist in {config} für {key} eingestellt?",
        ),
        "zh": (
            "{config} 里 {key} 被设置成了多少？",
            "{key} 这个配置项的值是多少？",
            "在 {config} 中，{key} 配置的数值是什么？",
        ),
        "ru": (
            "Какое значение у {key} в {config}?",
            "Какое значение имеет настройка {key}?",
            "Какое число задано для {key} в {config}?",
        ),
    },
    "python": {
        "en": (
            "What is the minimum Python version this project requires?",
            "Which Python versions does pyproject.toml allow?",
            "What is the oldest interpreter release the package supports?",
        ),
        "es": (
            "¿Cuál es la versión mínima de Python que requiere este proyecto?",
            "¿Qué versiones de Python permite pyproject.toml?",
            "¿Cuál es la versión más antigua del intérprete que soporta el paquete?",
        ),
        "de": (
            "Welche Python-Version braucht dieses Projekt mindestens?",
            "Welche Python-Versionen erlaubt pyproject.toml?",
            "Was ist die älteste Interpreter-Version, die das Paket unterstützt?",
        ),
        "zh": (
            "这个项目最低需要哪个 Python 版本？",
            "pyproject.toml 允许哪些 Python 版本？",
            "这个包支持的最老的解释器版本是多少？",
        ),
        "ru": (
            "Какая минимальная версия Python нужна этому проекту?",
            "Какие версии Python допускает pyproject.toml?",
            "Какую самую старую версию интерпретатора поддерживает пакет?",
        ),
    },
    "errors": {
        "en": (
            "How many ERROR lines does {error_log} have?",
            "Count the lines of {error_log} that report an ERROR.",
            "How many failures at the ERROR level were logged in {error_log}?",
        ),
        "es": (
            "¿Cuántas líneas ERROR tiene {error_log}?",
            "Cuenta las líneas de {error_log} que informan de un ERROR.",
            "¿Cuántos fallos de nivel ERROR se registraron en {error_log}?",
        ),
        "de": (
            "Wie viele ERROR-Zeilen hat {error_log}?",
            "Zähle die Zeilen in {error_log}, die einen ERROR melden.",
            "Wie viele Fehler der Stufe ERROR wurden in {error_log} protokolliert?",
        ),
        "zh": (
            "{error_log} 里有多少行 ERROR？",
            "数一数 {error_log} 中报告 ERROR 的行。",
            "{error_log} 记录了多少条 ERROR 级别的故障？",
        ),
        "ru": (
            "Сколько строк ERROR в {error_log}?",
            "Посчитай строки {error_log}, которые сообщают об ERROR.",
            "Сколько сбоев уровня ERROR записано в {error_log}?",
        ),
    },
    "rows": {
        "en": (
            "How many data rows are in {csv}, not counting the header?",
            "How many records does {csv} hold?",
            "Not counting its header, how many entries does the table {csv} list?",
        ),
        "es": (
            "¿Cuántas filas de datos hay en {csv}, sin contar la cabecera?",
            "¿Cuántos registros contiene {csv}?",
            "Sin contar la cabecera, ¿cuántas entradas tiene la tabla {csv}?",
        ),
        "de": (
            "Wie viele Datenzeilen hat {csv}, ohne die Kopfzeile?",
            "Wie viele Datensätze enthält {csv}?",
            "Wie viele Einträge listet die Tabelle {csv}, die Kopfzeile nicht mitgezählt?",
        ),
        "zh": (
            "{csv} 里有多少行数据（不算表头）？",
            "{csv} 包含多少条记录？",
            "不算表头，表格 {csv} 列出了多少个条目？",
        ),
        "ru": (
            "Сколько строк данных в {csv}, не считая заголовка?",
            "Сколько записей содержит {csv}?",
            "Сколько позиций перечислено в таблице {csv}, без строки заголовка?",
        ),
    },
    "folder": {
        "en": (
            "Which files are in {folder}?",
            "List the files under {folder}/.",
            "What does the {folder} folder contain?",
        ),
        "es": (
            "¿Qué archivos hay en {folder}?",
            "Enumera los ficheros que hay en {folder}/.",
            "¿Qué contiene la carpeta {folder}?",
        ),
        "de": (
            "Welche Dateien liegen in {folder}?",
            "Liste die Dateien unter {folder}/ auf.",
            "Was enthält der Ordner {folder}?",
        ),
        "zh": ("{folder} 里有哪些文件？", "列出 {folder}/ 下的文件。", "{folder} 这个目录里装了什么？"),
        "ru": ("Какие файлы лежат в {folder}?", "Перечисли файлы в {folder}/.", "Что содержит папка {folder}?"),
    },
    "latest": {
        "en": (
            "What is the latest version in CHANGELOG.md?",
            "Which release is the newest one in the changelog?",
            "What is the most recent release number the project records?",
        ),
        "es": (
            "¿Cuál es la última versión en CHANGELOG.md?",
            "¿Qué versión es la más reciente del registro de cambios?",
            "¿Cuál es el número de la publicación más reciente que registra el proyecto?",
        ),
        "de": (
            "Was ist die neueste Version in CHANGELOG.md?",
            "Welches Release ist das neueste im Änderungsprotokoll?",
            "Welche Versionsnummer hat die jüngste Veröffentlichung, die das Projekt verzeichnet?",
        ),
        "zh": (
            "CHANGELOG.md 里最新的版本是多少？",
            "变更日志里最新的发布是哪个版本？",
            "项目记录的最近一次发布的版本号是什么？",
        ),
        "ru": (
            "Какая последняя версия в CHANGELOG.md?",
            "Какой релиз самый новый в журнале изменений?",
            "Какой номер у самого свежего выпуска, записанного в проекте?",
        ),
    },
    "defines": {
        "en": (
            "Which file defines {symbol}?",
            "Where is `{symbol}` implemented? Give the file.",
            "In which source file is the definition of {symbol} written?",
        ),
        "es": (
            "¿Qué archivo define {symbol}?",
            "¿Dónde está implementado `{symbol}`? Dame el fichero.",
            "¿En qué fichero fuente está escrita la definición de {symbol}?",
        ),
        "de": (
            "Welche Datei definiert {symbol}?",
            "Wo ist `{symbol}` implementiert? Nenne die Datei.",
            "In welcher Quelldatei steht die Definition von {symbol}?",
        ),
        "zh": (
            "哪个文件定义了 {symbol}？",
            "`{symbol}` 是在哪里实现的？给出文件名。",
            "{symbol} 的定义写在哪个源文件里？",
        ),
        "ru": (
            "В каком файле определён {symbol}?",
            "Где реализован `{symbol}`? Назови файл.",
            "В каком исходном файле записано определение {symbol}?",
        ),
    },
    "todo": {
        "en": (
            "Which items in TODO.md are still open?",
            "What is left to do according to the checklist?",
            "List the tasks in TODO.md that have not been ticked off yet.",
        ),
        "es": (
            "¿Qué puntos de TODO.md siguen abiertos?",
            "¿Qué queda por hacer según la lista de tareas?",
            "Enumera las tareas de TODO.md que aún no están marcadas como hechas.",
        ),
        "de": (
            "Welche Punkte in TODO.md sind noch offen?",
            "Was ist laut der Checkliste noch zu tun?",
            "Liste die Aufgaben in TODO.md auf, die noch nicht abgehakt sind.",
        ),
        "zh": ("TODO.md 里还有哪些事项没完成？", "按照待办清单，还剩下什么要做？", "列出 TODO.md 中还没有打勾的任务。"),
        "ru": (
            "Какие пункты в TODO.md ещё открыты?",
            "Что ещё осталось сделать по списку задач?",
            "Перечисли задачи из TODO.md, которые ещё не отмечены выполненными.",
        ),
    },
    "smallest": {
        "en": ("Which file is the smallest?", "What is the smallest file here?", "Which file takes the fewest bytes?"),
        "es": (
            "¿Cuál es el archivo más pequeño?",
            "¿Qué fichero es el menor de aquí?",
            "¿Qué archivo ocupa menos bytes?",
        ),
        "de": (
            "Welche Datei ist die kleinste?",
            "Was ist hier die kleinste Datei?",
            "Welche Datei hat die wenigsten Bytes?",
        ),
        "zh": ("哪个文件最小？", "这里最小的文件是哪个？", "哪个文件的字节数最少？"),
        "ru": (
            "Какой файл самый маленький?",
            "Какой файл здесь меньше всех?",
            "Какой файл занимает меньше всего байт?",
        ),
    },
    "newest": {
        "en": (
            "Which file was modified most recently?",
            "What is the newest file in the folder?",
            "Which file was changed last?",
        ),
        "es": (
            "¿Qué archivo se modificó más recientemente?",
            "¿Cuál es el fichero más nuevo de la carpeta?",
            "¿Qué archivo se cambió por última vez?",
        ),
        "de": (
            "Welche Datei wurde zuletzt geändert?",
            "Was ist die neueste Datei im Ordner?",
            "Welche Datei wurde als letzte bearbeitet?",
        ),
        "zh": ("哪个文件是最近修改的？", "文件夹里最新的文件是哪个？", "最后一次被改动的是哪个文件？"),
        "ru": (
            "Какой файл изменяли последним?",
            "Какой файл в папке самый новый?",
            "Какой файл был отредактирован позже всех?",
        ),
    },
    "joined": {
        "en": (
            "{refused_log} reports a refused connection. Which service in {services} listens on that port?",
            "Look up the port that {refused_log} says was refused in {services}: which service is it?",
            "A connection was turned away on some port; which service owns that port?",
        ),
        "es": (
            "{refused_log} informa de una conexión rechazada. ¿Qué servicio de {services} escucha en ese puerto?",
            "Busca en {services} el puerto que {refused_log} dice que fue rechazado: ¿qué servicio es?",
            "Se rechazó una conexión en cierto puerto; ¿a qué servicio pertenece ese puerto?",
        ),
        "de": (
            "{refused_log} meldet eine abgelehnte Verbindung. Welcher Dienst in {services} lauscht auf diesem Port?",
            "Schlag den Port, den {refused_log} als abgelehnt meldet, in {services} nach: welcher Dienst ist es?",
            "Eine Verbindung wurde an einem Port abgewiesen; welchem Dienst gehört dieser Port?",
        ),
        "zh": (
            "{refused_log} 报告了一次被拒绝的连接。{services} 里哪个服务监听这个端口？",
            "在 {services} 里查一下 {refused_log} 说被拒绝的那个端口：是哪个服务？",
            "某个端口上的连接被拒绝了；这个端口属于哪个服务？",
        ),
        "ru": (
            "{refused_log} сообщает об отклонённом соединении. Какой сервис из {services} слушает этот порт?",
            "Найди в {services} порт, который по {refused_log} был отклонён: какой это сервис?",
            "На каком-то порту соединение было отвергнуто; какому сервису принадлежит этот порт?",
        ),
    },
    "recipe": {
        "en": (
            "What command does `make test` run?",
            "What does the `test` target in the Makefile execute?",
            "Which command runs the test suite when I type make test?",
        ),
        "es": (
            "¿Qué comando ejecuta `make test`?",
            "¿Qué ejecuta el objetivo `test` del Makefile?",
            "¿Qué orden lanza las pruebas cuando escribo make test?",
        ),
        "de": (
            "Welchen Befehl führt `make test` aus?",
            "Was führt das Ziel `test` im Makefile aus?",
            "Welches Kommando startet die Tests, wenn ich make test eingebe?",
        ),
        "zh": (
            "`make test` 运行的是什么命令？",
            "Makefile 里的 `test` 目标执行什么？",
            "我输入 make test 时，是哪条命令在跑测试？",
        ),
        "ru": (
            "Какую команду запускает `make test`?",
            "Что выполняет цель `test` в Makefile?",
            "Какая команда запускает тесты, когда я набираю make test?",
        ),
    },
    "quote_line": {
        "en": (
            "Quote the line of {timeout} that reports the timeout.",
            "Which line in {timeout} mentions the timeout? Give it exactly.",
            "Copy out, exactly, the log entry about the operation that timed out.",
        ),
        "es": (
            "Cita la línea de {timeout} que informa del timeout.",
            "¿Qué línea de {timeout} menciona el timeout? Dámela tal cual.",
            "Copia exactamente la entrada del log sobre la operación que agotó su tiempo de espera.",
        ),
        "de": (
            "Zitiere die Zeile aus {timeout}, die den Timeout meldet.",
            "Welche Zeile in {timeout} erwähnt den Timeout? Gib sie wörtlich wieder.",
            "Schreib den Logeintrag über den Vorgang mit Zeitüberschreitung genau ab.",
        ),
        "zh": (
            "引用 {timeout} 中报告超时的那一行。",
            "{timeout} 里哪一行提到了超时？请原样给出。",
            "把关于操作超时的那条日志原样抄出来。",
        ),
        "ru": (
            "Процитируй строку из {timeout}, где сообщается о тайм-ауте.",
            "Какая строка в {timeout} упоминает таймаут? Приведи её дословно.",
            "Точно перепиши запись лога об операции, превысившей время ожидания.",
        ),
    },
    "python_files": {
        "en": (
            "How many Python files are there?",
            "How many .py files does the project have?",
            "Count the Python source modules in the whole tree.",
        ),
        "es": (
            "¿Cuántos archivos de Python hay?",
            "¿Cuántos ficheros .py tiene el proyecto?",
            "Cuenta los módulos fuente de Python de todo el árbol.",
        ),
        "de": (
            "Wie viele Python-Dateien gibt es?",
            "Wie viele .py-Dateien hat das Projekt?",
            "Zähle die Python-Quellmodule im ganzen Verzeichnisbaum.",
        ),
        "zh": ("这里一共有多少个 Python 文件？", "项目里有多少个 .py 文件？", "数一数整个目录树里的 Python 源码模块。"),
        "ru": (
            "Сколько здесь файлов Python?",
            "Сколько файлов .py в проекте?",
            "Посчитай модули с исходным кодом на Python во всём дереве.",
        ),
    },
    "mentions_host": {
        "en": (
            "Which files mention {host}?",
            "List every file that refers to {host}.",
            "Which documents name the machine {host}?",
        ),
        "es": (
            "¿Qué archivos mencionan {host}?",
            "Enumera todos los ficheros que hacen referencia a {host}.",
            "¿Qué documentos nombran la máquina {host}?",
        ),
        "de": (
            "Welche Dateien erwähnen {host}?",
            "Liste jede Datei auf, die sich auf {host} bezieht.",
            "Welche Dokumente nennen den Rechner {host}?",
        ),
        "zh": ("哪些文件提到了 {host}？", "列出所有引用 {host} 的文件。", "哪些文档里出现了主机 {host}？"),
        "ru": (
            "Какие файлы упоминают {host}?",
            "Перечисли все файлы, которые ссылаются на {host}.",
            "В каких документах названа машина {host}?",
        ),
    },
    "set": {
        "en": (
            "Change {key} in {config} to {value}.",
            "Set {key} to {value} in {config}, and change nothing else.",
            "Update the {key} setting to {value}.",
        ),
        "es": (
            "Cambia {key} en {config} a {value}.",
            "Pon {key} a {value} en {config} y no cambies nada más.",
            "Actualiza el ajuste {key} a {value}.",
        ),
        "de": (
            "Ändere {key} in {config} auf {value}.",
            "Setze {key} in {config} auf {value} und ändere sonst nichts.",
            "Stell die Einstellung {key} auf {value} um.",
        ),
        "zh": (
            "把 {config} 里的 {key} 改成 {value}。",
            "在 {config} 中把 {key} 设为 {value}，其他都不要改。",
            "把配置项 {key} 更新为 {value}。",
        ),
        "ru": (
            "Измени {key} в {config} на {value}.",
            "Установи {key} в {value} в {config} и больше ничего не меняй.",
            "Обнови настройку {key} на {value}.",
        ),
    },
    "append": {
        "en": (
            "Add the line '- [ ] {item}' to the end of TODO.md.",
            "Append '- [ ] {item}' as a new last line of TODO.md.",
            "Put a new open task '- [ ] {item}' at the bottom of the checklist.",
        ),
        "es": (
            "Añade la línea '- [ ] {item}' al final de TODO.md.",
            "Agrega '- [ ] {item}' como nueva última línea de TODO.md.",
            "Pon una tarea pendiente nueva '- [ ] {item}' al final de la lista.",
        ),
        "de": (
            "Füge die Zeile '- [ ] {item}' am Ende von TODO.md hinzu.",
            "Hänge '- [ ] {item}' als neue letzte Zeile an TODO.md an.",
            "Setz eine neue offene Aufgabe '- [ ] {item}' ans Ende der Checkliste.",
        ),
        "zh": (
            "在 TODO.md 末尾加上一行 '- [ ] {item}'。",
            "把 '- [ ] {item}' 作为新的最后一行追加到 TODO.md。",
            "在待办清单的最下面加一个新的未完成任务 '- [ ] {item}'。",
        ),
        "ru": (
            "Добавь строку '- [ ] {item}' в конец TODO.md.",
            "Допиши '- [ ] {item}' новой последней строкой в TODO.md.",
            "Помести новую открытую задачу '- [ ] {item}' в самый низ списка.",
        ),
    },
    "delete": {
        "en": ("Delete {bak}.", "Remove the backup file {bak}.", "Get rid of the old copy of the settings, {bak}."),
        "es": (
            "Borra {bak}.",
            "Elimina el archivo de copia de seguridad {bak}.",
            "Quita la copia antigua de la configuración, {bak}.",
        ),
        "de": (
            "Lösche {bak}.",
            "Entferne die Sicherungsdatei {bak}.",
            "Schaff die alte Kopie der Einstellungen weg, {bak}.",
        ),
        "zh": ("删除 {bak}。", "把备份文件 {bak} 删掉。", "去掉设置的旧副本 {bak}。"),
        "ru": ("Удали {bak}.", "Удали файл резервной копии {bak}.", "Избавься от старой копии настроек, {bak}."),
    },
    # kinds asked of real projects
    "version": {
        "en": (
            "What version is this project?",
            "Which version does {manifest} declare?",
            "What is the release number of the package here?",
        ),
        "es": (
            "¿Qué versión tiene este proyecto?",
            "¿Qué versión declara {manifest}?",
            "¿Cuál es el número de publicación del paquete que hay aquí?",
        ),
        "de": (
            "Welche Version hat dieses Projekt?",
            "Welche Version gibt {manifest} an?",
            "Was ist die Release-Nummer des Pakets hier?",
        ),
        "zh": ("这个项目是什么版本？", "{manifest} 里声明的版本是多少？", "这里这个包的发布版本号是多少？"),
        "ru": (
            "Какая версия у этого проекта?",
            "Какую версию указывает {manifest}?",
            "Какой номер выпуска у этого пакета?",
        ),
    },
    "license": {
        "en": (
            "Under which license is this project published?",
            "What license does {manifest} give?",
            "Which terms of use (licence) does the package come under?",
        ),
        "es": (
            "¿Bajo qué licencia se publica este proyecto?",
            "¿Qué licencia indica {manifest}?",
            "¿Con qué condiciones de uso (licencia) se distribuye el paquete?",
        ),
        "de": (
            "Unter welcher Lizenz wird dieses Projekt veröffentlicht?",
            "Welche Lizenz nennt {manifest}?",
            "Unter welchen Nutzungsbedingungen (Lizenz) steht das Paket?",
        ),
        "zh": (
            "这个项目是以什么许可证发布的？",
            "{manifest} 里写的许可证是什么？",
            "这个包采用的是哪种使用条款（许可协议）？",
        ),
        "ru": (
            "Под какой лицензией опубликован этот проект?",
            "Какую лицензию указывает {manifest}?",
            "На каких условиях использования (лицензия) распространяется пакет?",
        ),
    },
    "runtime": {
        "en": (
            "What is the oldest {runtime} version this project supports?",
            "Which minimum {runtime} version does {manifest} ask for?",
            "How old a {runtime} toolchain can still build or run this package?",
        ),
        "es": (
            "¿Cuál es la versión más antigua de {runtime} que soporta este proyecto?",
            "¿Qué versión mínima de {runtime} pide {manifest}?",
            "¿Con qué versión de {runtime}, como mínimo, se puede usar este paquete?",
        ),
        "de": (
            "Welche {runtime}-Version unterstützt dieses Projekt mindestens?",
            "Welche {runtime}-Mindestversion verlangt {manifest}?",
            "Wie alt darf die {runtime}-Umgebung höchstens sein, damit das Paket noch läuft?",
        ),
        "zh": (
            "这个项目最低支持哪个 {runtime} 版本？",
            "{manifest} 要求的最低 {runtime} 版本是多少？",
            "最老能用哪个版本的 {runtime} 来构建或运行这个包？",
        ),
        "ru": (
            "Какую самую старую версию {runtime} поддерживает этот проект?",
            "Какую минимальную версию {runtime} требует {manifest}?",
            "С какой самой ранней версией {runtime} ещё работает этот пакет?",
        ),
    },
    "dependency": {
        "en": (
            "Which version of {dep} does this project require?",
            "What version of {dep} does {manifest} ask for?",
            "The package depends on {dep}: at what version?",
        ),
        "es": (
            "¿Qué versión de {dep} requiere este proyecto?",
            "¿Qué versión de {dep} pide {manifest}?",
            "El paquete depende de {dep}: ¿de qué versión?",
        ),
        "de": (
            "Welche Version von {dep} braucht dieses Projekt?",
            "Welche Version von {dep} verlangt {manifest}?",
            "Das Paket hängt von {dep} ab: in welcher Version?",
        ),
        "zh": (
            "这个项目需要哪个版本的 {dep}？",
            "{manifest} 要求的 {dep} 版本是多少？",
            "这个包依赖 {dep}：是哪个版本？",
        ),
        "ru": (
            "Какая версия {dep} нужна этому проекту?",
            "Какую версию {dep} требует {manifest}?",
            "Пакет зависит от {dep}: от какой версии?",
        ),
    },
    "uses": {
        "en": (
            "Which files use {symbol}, other than the one that defines it?",
            "Where is `{symbol}` referred to, apart from its definition? List the files.",
            "List the files that call or mention the name {symbol} (not counting its own file).",
        ),
        "es": (
            "¿Qué archivos usan {symbol}, aparte del que lo define?",
            "¿Dónde se hace referencia a `{symbol}`, fuera de su definición? Enumera los ficheros.",
            "Enumera los ficheros que llaman o nombran {symbol} (sin contar el suyo propio).",
        ),
        "de": (
            "Welche Dateien verwenden {symbol}, außer der, die es definiert?",
            "Wo wird `{symbol}` außerhalb seiner Definition verwendet? Liste die Dateien auf.",
            "Nenne die Dateien, die {symbol} aufrufen oder erwähnen (seine eigene Datei nicht mitgezählt).",
        ),
        "zh": (
            "除了定义它的文件，还有哪些文件用到了 {symbol}？",
            "除了定义处，`{symbol}` 还在哪些文件里被引用？列出文件。",
            "列出调用或提到 {symbol} 这个名字的文件（不算它自己所在的文件）。",
        ),
        "ru": (
            "Какие файлы используют {symbol}, кроме того, где он определён?",
            "Где ещё, кроме определения, встречается `{symbol}`? Перечисли файлы.",
            "Перечисли файлы, которые вызывают или упоминают {symbol} (не считая его собственного файла).",
        ),
    },
    "folder_count": {
        "en": (
            "How many files are in {folder}?",
            "How many files does the folder {folder}/ hold?",
            "Count the documents inside the {folder} directory.",
        ),
        "es": (
            "¿Cuántos archivos hay en {folder}?",
            "¿Cuántos ficheros contiene la carpeta {folder}/?",
            "Cuenta los documentos que hay dentro del directorio {folder}.",
        ),
        "de": (
            "Wie viele Dateien liegen in {folder}?",
            "Wie viele Dateien enthält der Ordner {folder}/?",
            "Zähle die Dokumente im Verzeichnis {folder}.",
        ),
        "zh": ("{folder} 里有多少个文件？", "{folder}/ 这个文件夹里有几个文件？", "数一数 {folder} 目录里的文档。"),
        "ru": (
            "Сколько файлов в {folder}?",
            "Сколько файлов содержит папка {folder}/?",
            "Посчитай документы внутри каталога {folder}.",
        ),
    },
    "quote_definition": {
        "en": (
            "Quote the line of {file} where {symbol} is defined.",
            "Give me, exactly, the line that defines {symbol}.",
            "Copy out word for word the declaration of {symbol} in {file}.",
        ),
        "es": (
            "Cita la línea de {file} donde se define {symbol}.",
            "Dame, tal cual, la línea que define {symbol}.",
            "Copia palabra por palabra la declaración de {symbol} en {file}.",
        ),
        "de": (
            "Zitiere die Zeile aus {file}, in der {symbol} definiert wird.",
            "Gib mir genau die Zeile, die {symbol} definiert.",
            "Schreib die Deklaration von {symbol} in {file} wörtlich ab.",
        ),
        "zh": (
            "引用 {file} 中定义 {symbol} 的那一行。",
            "请原样给出定义 {symbol} 的那一行。",
            "把 {file} 里 {symbol} 的声明逐字抄出来。",
        ),
        "ru": (
            "Процитируй строку из {file}, где определён {symbol}.",
            "Дай дословно строку, в которой определяется {symbol}.",
            "Перепиши слово в слово объявление {symbol} в {file}.",
        ),
    },
}

# a topic no file mentions, as a question in each language asks about it (the check looks for the English
# words, as the files would say it); German as an accusative, Russian with its preposition
TOPICS: dict[str, dict[Language, str]] = {
    "a certificate expiry": {
        "en": "a certificate expiry",
        "es": "la caducidad de un certificado",
        "de": "ein abgelaufenes Zertifikat",
        "zh": "证书过期",
        "ru": "об истечении срока сертификата",
    },
    "a memory leak": {
        "en": "a memory leak",
        "es": "una fuga de memoria",
        "de": "ein Speicherleck",
        "zh": "内存泄漏",
        "ru": "об утечке памяти",
    },
    "a failed backup": {
        "en": "a failed backup",
        "es": "una copia de seguridad fallida",
        "de": "eine fehlgeschlagene Sicherung",
        "zh": "备份失败",
        "ru": "о неудачном резервном копировании",
    },
    "a DNS outage": {
        "en": "a DNS outage",
        "es": "una caída del DNS",
        "de": "einen DNS-Ausfall",
        "zh": "DNS 故障",
        "ru": "о сбое DNS",
    },
}


def wordings(kind: str, language: Language) -> tuple[str, ...]:
    return WORDINGS[kind][language]


def check_complete() -> list[str]:
    """What is missing: a kind without three wordings in each language (the tests keep this empty)."""
    return [
        f"{kind}/{language}"
        for kind, by_language in WORDINGS.items()
        for language in LANGUAGES
        if len(by_language.get(language, ())) < 3
    ]
