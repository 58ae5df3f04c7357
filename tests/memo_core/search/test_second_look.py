"""memo_core/search/second_look.py and the sentence pass that feeds it: a question's best
passages rescored by their best sentence, from sentence vectors made after the passages'."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import apsw
import numpy as np
import pytest
from conftest import write_notes
from tinymodels import make_tiny_model_dir

from memo_core import Searcher
from memo_core.index import indexer
from memo_core.index.vectors import pack
from memo_core.model.embedder import Embedder
from memo_core.model.onnx_embedder import load_model_dir
from memo_core.model.pair import PairedEmbedder
from memo_core.results import Explain
from memo_core.search.ranking import Placed
from memo_core.search.second_look import (
    DEPTH,
    MIN_SPAN,
    across_scripts,
    best_sentences,
    second_look,
    wants_second_look,
)
from memo_core.tuning import Tuning

WORDS = "beets cabbage bowl sings restic borscht kvass".split()


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("how do I restore one folder from restic?", True),
        ("restic restore?", True),  # it asks
        ("I need to restore one folder from the backup", True),  # a sentence
        ("restic restore folder", False),  # keywords
        ("Recordset object (ADO)", False),  # a title
    ],
)
def test_questions_and_sentences_get_a_second_look(query: str, wanted: bool) -> None:
    assert wants_second_look(query) is wanted


def test_best_sentence() -> None:
    rows = np.array([[1.0, 0.0], [0.6, 0.8]], np.float32)
    assert best_sentences(pack(rows), np.array([0.0, 1.0], np.float32)) == pytest.approx(
        0.8, abs=0.01
    )
    assert best_sentences(None, np.array([0.0, 1.0], np.float32)) is None
    assert best_sentences(b"\x00" * 7, np.array([0.0, 1.0], np.float32)) is None  # not rows


def _placed(n: int) -> list[Placed]:
    why = Explain(None, None, None, 1.0, None, 0.5, None, None, None, None)
    return [Placed(0, i, 1.0 - i / n, ("vec",), why) for i in range(n)]


def test_the_head_is_rescored_by_its_best_sentence_the_rest_keeps_its_order() -> None:
    placed = _placed(30)
    query = np.array([1.0, 0.0], np.float32)
    # The fifth passage has the one sentence that answers; the others' say nothing.
    blobs = {4: pack(np.array([[0.0, 1.0], [1.0, 0.0]], np.float32))}
    blobs |= {i: pack(np.array([[0.0, 1.0]], np.float32)) for i in range(DEPTH) if i != 4}
    looked = second_look(placed, lambda head: {i: blobs[i] for i in range(len(head))}, query, 0.6)
    assert [p.chunk for p in looked][:2] == [4, 0]
    assert [p.chunk for p in looked][DEPTH:] == list(range(DEPTH, 30))
    assert all(a.score >= b.score for a, b in zip(looked, looked[1:], strict=False))
    first = looked[0].explain
    assert first is not None and first.second_look == pytest.approx(0.6)
    assert first.sentence == pytest.approx(1.0, abs=0.01) and first.ranked == pytest.approx(
        1 - 4 / 30
    )


def test_sentences_nearly_alike_do_not_overturn_the_ranking() -> None:
    # A small folder: every passage is in the head, and their best sentences differ by a
    # hair (a third of MIN_SPAN). Stretched to the whole weight, that hair would put the
    # last passage above the one before it; held to MIN_SPAN it gains a third of the weight.
    placed = _placed(4)  # 1, 2/3, 1/3, 0 once min-max normalised
    query = np.array([1.0, 0.0], np.float32)
    hair = MIN_SPAN / 3
    cosines = [0.8, 0.8, 0.8, 0.8 + hair]
    blobs = {
        i: pack(np.array([[c, float(np.sqrt(1 - c * c))]], np.float32))
        for i, c in enumerate(cosines)
    }
    looked = second_look(placed, lambda head: {i: blobs[i] for i in range(len(head))}, query, 0.6)
    assert [p.chunk for p in looked] == [0, 1, 2, 3]
    assert looked[3].explain is not None
    assert looked[3].explain.second_look == pytest.approx(0.6 / 3, abs=0.01)


def test_no_sentences_and_no_weight_change_nothing() -> None:
    placed = _placed(12)
    query = np.array([1.0, 0.0], np.float32)
    assert [p.chunk for p in second_look(placed, lambda head: {}, query, 0.6)] == list(range(12))
    assert second_look(placed, lambda head: {}, query, 0.0) == placed


RUSSIAN = "Настроить бэкап сервера: restic каждую ночь, проверка раз в месяц."
# Russian about code: Latin identifiers, still more Cyrillic letters than Latin ones.
RUSSIAN_CODE = "Запустите `restic backup --exclude-file`, затем проверьте снимки командой check."
ENGLISH = "Back up the server with restic every night and check the snapshots monthly."
MOSTLY_RUSSIAN = [RUSSIAN, RUSSIAN_CODE, ENGLISH, RUSSIAN]


@pytest.mark.parametrize(
    ("query", "head", "crossing"),
    [
        ("how do I restore files from the backup?", MOSTLY_RUSSIAN, True),
        ("как восстановить файлы из бэкапа?", [ENGLISH, ENGLISH, RUSSIAN], True),
        ("как восстановить файлы из бэкапа?", MOSTLY_RUSSIAN, False),
        ("how do I restore files from the backup?", [ENGLISH, "```\n$ 42\n```"], False),
        ("как запустить restic backup по расписанию?", [RUSSIAN_CODE], False),
        # Code is Latin in notes of every language: a Russian note's prose says it is Russian.
        ("как запустить бэкап?", ["Так:\n\n```\nrestic backup --exclude-file=x /home\n```"], False),
        ("42?", [RUSSIAN], False),  # no letters: no script to cross
        ("how do I restore files?", [], False),
    ],
)
def test_a_query_across_scripts(query: str, head: list[str], crossing: bool) -> None:
    assert across_scripts(query, head) is crossing


def test_across_scripts_the_look_weighs_on_hybrids_own_scale() -> None:
    # Hybrid's fused scores .7 and .3 (no word matched: the vectors' share), the second
    # with the sentence that answers. Stretched over the ranking (down to .2) they are 1 and
    # .2, and the look's .6 cannot lift the second; on the fused scale it can.
    why = Explain(None, None, None, 1.0, None, 0.5, None, None, None, None)
    placed = [Placed(0, 0, 0.7, ("vec",), why), Placed(0, 1, 0.3, ("vec",), why)]
    placed += [Placed(0, i, 0.3 - i / 100, ("vec",), why) for i in range(2, 11)]
    query = np.array([1.0, 0.0], np.float32)
    blobs = {i: pack(np.array([[0.0, 1.0]], np.float32)) for i in range(11)}
    blobs[1] = pack(np.array([[1.0, 0.0]], np.float32))

    def read(head: Sequence[Placed]) -> dict[int, bytes]:
        return {i: blobs[p.chunk] for i, p in enumerate(head)}

    stretched = second_look(placed, read, query, 0.6)
    own = second_look(placed, read, query, 0.6, stretched=False)
    assert [p.chunk for p in stretched][:2] == [0, 1]
    assert [p.chunk for p in own][:2] == [1, 0]
    assert own[0].score == pytest.approx(0.3 + 0.6) and own[1].score == pytest.approx(0.7)


# A passage that means, on the whole, something else but holds the one sentence that
# answers; and one that is closer on the whole and has no such sentence.
NOTES = {
    "answer.md": "# Kitchen\n\n"
    "Beets cabbage beets cabbage beets cabbage beets cabbage here.\n\n"
    "Bowl sings restic bowl sings restic bowl sings restic bowl sings.\n",
    "broad.md": "# Garden\n\n"
    "Beets bowl kvass beets bowl kvass beets bowl kvass beets bowl.\n\n"
    "Cabbage sings borscht cabbage sings borscht cabbage sings here.\n",
    # Others, further off, as a folder has them (scores are normalised over them all).
    **{
        f"other{i}.md": f"# Other {i}\n\n" + " ".join(WORDS[2 + (i + j) % 5] for j in range(12))
        for i in range(10)
    },
}


@pytest.fixture
def pair(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    base = tmp_path_factory.mktemp("look")
    a = load_model_dir(make_tiny_model_dir(base / "a", dim=16, words=WORDS, seed=3))
    b = load_model_dir(make_tiny_model_dir(base / "b", dim=8, words=WORDS, seed=4))
    return PairedEmbedder(a, b, share=0.9, nonsense_gate=0.25, lenient=0.0, second_look=0.6)


@pytest.mark.parametrize("mode", ["vec", "hybrid"])
def test_a_question_answered_by_one_sentence_ranks_first(
    tmp_path: Path, pair: PairedEmbedder, mode: str
) -> None:
    notes = write_notes(tmp_path / "notes", NOTES)
    with Searcher(notes, embedder=pair) as s:
        s.refresh()
        [st] = s.status()
        assert st.chunks_without_sentences == 0
        question = "beets cabbage?"  # it asks: a second look
        assert [h.relpath for h in s.search(question, k=2, mode=mode)] == [
            "answer.md",
            "broad.md",
        ]
        # The same words as keywords: no second look, the passage closer on the whole first.
        assert s.search("beets cabbage", k=1, mode="vec")[0].relpath == "broad.md"
        why = s.search(question, k=1, mode=mode, explain=True)[0].explain
        assert why is not None and why.second_look is not None and why.sentence is not None


def test_the_sentence_pass_embeds_each_text_once(tmp_path: Path, pair: PairedEmbedder) -> None:
    notes = write_notes(tmp_path / "notes", NOTES)
    with Searcher(notes, embedder=pair) as s:
        first = s.refresh()
        assert first.sentences_embedded >= 5
        (notes / "copy.md").write_text(NOTES["answer.md"], encoding="utf-8")
        again = s.refresh()  # the same texts: their sentences' vectors are reused
        assert again.chunks_embedded == 0 and again.sentences_embedded == 0
        assert s.status()[0].chunks_without_sentences == 0


def test_a_sentence_two_passages_share_is_embedded_once(
    tmp_path: Path, pair: PairedEmbedder
) -> None:
    """Each passage keeps its own sentences' vectors, in its order, but a sentence several
    passages of a step hold (a site's boilerplate) is embedded once."""
    shared = "Bowl sings restic, bowl sings restic, bowl sings restic here."  # 40+ characters
    notes = write_notes(
        tmp_path / "notes",
        {
            "a.md": f"# A\n\nBeets cabbage beets, beets cabbage beets, beets here. {shared}\n",
            "b.md": f"# B\n\n{shared} Kvass borscht kvass, kvass borscht kvass, here.\n",
        },
    )
    with Searcher(notes, embedder=pair) as s:
        stats = s.refresh()
        assert stats.sentences_embedded == 3  # not 4
        hits = s.search("bowl sings restic?", k=2, mode="vec", explain=True)
    sentence = {h.relpath: h.explain.sentence for h in hits if h.explain is not None}
    assert sentence["a.md"] == pytest.approx(sentence["b.md"])  # the same sentence's vector


def sharing_notes(n: int) -> dict[str, str]:
    """`n` notes of one passage each: a sentence of its own and one they all share."""
    shared = "Bowl sings restic, bowl sings restic, bowl sings restic here."
    return {
        f"n{i}.md": f"# N{i}\n\nNote {i} beets cabbage, beets cabbage number {i} here. {shared}\n"
        for i in range(n)
    }


def sentence_blobs(notes: Path) -> list[tuple[str, bytes]]:
    """Each note's sentence vectors as its index holds them, by path."""
    db = apsw.Connection(str(notes / ".memo" / "index.db"))
    try:
        return list(
            db.execute(
                "SELECT f.path, s.vectors FROM sentences s JOIN chunks c ON c.id = s.chunk_id"
                " JOIN files f ON f.id = c.file_id ORDER BY f.path"
            )
        )
    finally:
        db.close()


@pytest.mark.parametrize("step", [1, 256])
def test_a_sentence_is_embedded_once_a_refresh_whatever_step_holds_it(
    tmp_path: Path, pair: PairedEmbedder, step: int
) -> None:
    """A site's boilerplate repeats over passages the pass takes in different steps (about
    a fifth of office-dev-ru's sentences): each is embedded once a refresh, and each
    passage's vectors are as one step would have made them."""
    texts = sharing_notes(4)
    blobs = []
    for tuning in (Tuning(batch_chunks=step), Tuning()):
        notes = write_notes(tmp_path / f"notes-{len(blobs)}", texts)
        with Searcher(notes, embedder=pair, tuning=tuning) as s:
            assert s.refresh().sentences_embedded == 5  # four own sentences and the shared
        blobs.append(sentence_blobs(notes))
    assert len(blobs[0]) == 4 and blobs[0] == blobs[1]


def test_a_step_gets_every_sentence_it_needs_whatever_the_refresh_let_go(
    tmp_path: Path, pair: PairedEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step is planned while the one before it is still being made, so a sentence it
    leaves to that one, or finds among those kept, may be let go (SENTENCES_KEPT) before
    it is written: each passage still gets its own sentences' vectors."""
    texts = sharing_notes(5)
    blobs = []
    for kept in (1, indexer.SENTENCES_KEPT):
        monkeypatch.setattr(indexer, "SENTENCES_KEPT", kept)
        notes = write_notes(tmp_path / f"notes-{kept}", texts)
        with Searcher(notes, embedder=pair, tuning=Tuning(batch_chunks=1)) as s:
            s.refresh()
            assert s.status()[0].chunks_without_sentences == 0
        blobs.append(sentence_blobs(notes))
    assert len(blobs[0]) == 5 and blobs[0] == blobs[1]


def test_a_single_model_takes_no_second_look(tmp_path: Path, tiny_embedder: Embedder) -> None:
    notes = write_notes(tmp_path / "notes", NOTES)
    with Searcher(notes, embedder=tiny_embedder) as s:
        stats = s.refresh()
        assert stats.sentences_embedded == 0 and s.status()[0].chunks_without_sentences == 0


def test_explain_says_what_the_second_look_added(tmp_path: Path, pair: PairedEmbedder) -> None:
    from memo_text import Lang, format_hits

    def why(results, lang: Lang = Lang.RU) -> str:
        return next(
            line.strip()
            for line in format_hits(results, lang=lang).splitlines()
            if line.startswith("  ")
        )

    notes = write_notes(tmp_path / "notes", NOTES)
    with Searcher(notes, embedder=pair) as s:
        s.refresh()
        looked = s.search("beets cabbage?", k=1, mode="hybrid", explain=True)
        plain = s.search("beets cabbage", k=1, mode="hybrid", explain=True)
    hit, e = looked[0], looked[0].explain
    assert e is not None and e.placed is not None and e.second_look is not None
    assert e.ranked is not None and e.sentence is not None
    assert hit.score == pytest.approx(e.placed + e.second_look)
    assert why(looked).startswith(
        f"почему: итог {hit.score:.4g} = место {e.placed:.4g} + второй взгляд "
        f"{e.second_look:.4g} (лучшее предложение: косинус {e.sentence:.4g}); до него: итог "
        f"{e.ranked:.4g} = "
    )
    assert why(looked, Lang.EN).startswith(f"why: score {hit.score:.4g} = place ")
    assert why(plain).startswith(f"почему: итог {plain[0].score:.4g} = ")
    assert plain[0].explain is not None and plain[0].explain.second_look is None
