"""memo_core/model/pair.py: two models' vectors side by side as one (memo's default), whose
dot products are the two models' cosines fused, and the floor that keeps names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import write_notes
from tinymodels import make_tiny_model_dir

from memo_core import Searcher
from memo_core.model.embedder import Embedder
from memo_core.model.onnx_embedder import load_model_dir
from memo_core.model.pair import PairedEmbedder, paired
from memo_core.model.sources import E5_USE_SOURCE

WORDS = "beets cabbage bowl sings restic".split()


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> tuple[Embedder, Embedder]:
    base = tmp_path_factory.mktemp("pair")
    a = make_tiny_model_dir(base / "a", dim=16, words=WORDS, seed=1)
    b = make_tiny_model_dir(base / "b", dim=8, words=WORDS, seed=2)
    return load_model_dir(a), load_model_dir(b)


@pytest.mark.parametrize("share", [0.9, 0.5, 0.1])
def test_a_dot_product_is_the_two_cosines_fused(two, share: float) -> None:
    a, b = two
    pair = PairedEmbedder(a, b, share=share, nonsense_gate=0.25, lenient=-0.08)
    texts = ["beets in the bowl", "restic sings", "cabbage"]
    joined, va, vb = pair.embed(texts), a.embed(texts), b.embed(texts)
    assert joined.shape == (3, 24) and pair.dim == 24
    assert np.allclose(np.linalg.norm(joined, axis=1), 1.0, atol=1e-5)
    fused = share * (va @ va.T) + (1 - share) * (vb @ vb.T)
    assert np.allclose(joined @ joined.T, fused, atol=1e-5)
    assert np.allclose(pair.part(joined[0], 0), va[0], atol=1e-5)
    assert np.allclose(pair.part(joined[0], 1), vb[0], atol=1e-5)
    assert np.allclose(pair.embed_batch(texts), joined, atol=1e-6)


def test_the_pair_names_both_models_and_its_share(two) -> None:
    a, b = two
    pair = PairedEmbedder(a, b, share=0.9, nonsense_gate=0.25, lenient=-0.08)
    other = PairedEmbedder(a, b, share=0.8, nonsense_gate=0.25, lenient=-0.08)
    assert a.model_id in pair.model_id and b.model_id in pair.model_id
    assert pair.model_id != other.model_id  # another share makes other vectors
    assert pair.sentence_model is a  # the first, stronger model reads the sentences
    with pytest.raises(ValueError, match="share"):
        PairedEmbedder(a, b, share=1.0, nonsense_gate=0.25, lenient=-0.08)


def test_no_floor_where_a_model_has_none(two) -> None:
    a, b = two  # tiny models bring no margin
    pair = PairedEmbedder(a, b, share=0.9, nonsense_gate=0.25, lenient=-0.08)
    assert pair.relevance_floor(pair.embed(["beets"], query=True)[0]) is None


# Russian notes; an English question of names only (which e5-small puts near its nonsense:
# alone, its floor answered `ничего не найдено`), and strings that mean nothing.
CITY_NOTES = {
    "warsaw.md": "# Варшава\n\nВаршава стоит на Висле и остаётся столицей Мазовецкого "
    "воеводства; старый город восстановили после войны.\n",
    "riga.md": "# Рига\n\nРига лежит в устье Даугавы, а до взморья в Юрмале полчаса "
    "на электричке.\n",
    "bread.md": "# Хлеб на закваске\n\nЗакваску кормлю раз в день мукой и водой, тесто "
    "расстаивается ночь в холодильнике.\n",
    "lviv.md": "# Львов\n\nВо Львове работали Грушевский, Шевченко бывал, а Франко здесь учился "
    "в университете.\n",
}


@pytest.fixture(scope="module")
def cities(tmp_path_factory: pytest.TempPathFactory, real_default: Embedder):
    notes = write_notes(tmp_path_factory.mktemp("cities") / "notes", CITY_NOTES)
    with Searcher(notes, embedder=real_default) as s:
        s.refresh()
        yield s


@pytest.mark.default_model
@pytest.mark.parametrize("mode", ["vec", "hybrid"])
def test_a_question_of_names_keeps_its_answer(cities, mode: str) -> None:
    hits = cities.search("Hrushevsky Shevchenko Franko", k=2, mode=mode)
    assert [h.relpath for h in hits][:1] == ["lviv.md"]


@pytest.mark.default_model
@pytest.mark.parametrize("mode", ["vec", "hybrid"])
@pytest.mark.parametrize(
    "query", ["zzqxv плюмбус", "xyzzy frobnicate", "qwfp arst zxcv", "блорфик трунделя"]
)
def test_gibberish_still_finds_nothing(cities, query: str, mode: str) -> None:
    assert list(cities.search(query, mode=mode)) == []


@pytest.mark.default_model
def test_e5_small_alone_lost_that_answer(tmp_path: Path, real_model: Embedder) -> None:
    """What the pair's floor mends: e5-small's own floor silenced the question of names."""
    notes = write_notes(tmp_path / "notes", CITY_NOTES)
    with Searcher(notes, embedder=real_model) as s:
        assert list(s.search("Hrushevsky Shevchenko Franko", mode="vec")) == []


@pytest.mark.default_model
def test_the_default_pair_is_built_with_its_policy(real_default: Embedder) -> None:
    assert isinstance(real_default, PairedEmbedder)
    assert real_default.share == E5_USE_SOURCE.share
    assert dict(real_default.fusion) == dict(E5_USE_SOURCE.fusion)
    assert real_default.second_look == E5_USE_SOURCE.second_look
    again = paired(E5_USE_SOURCE, real_default.first, real_default.second)
    assert again.model_id == real_default.model_id


def test_an_index_of_two_models_is_read_back_and_rebuilt_aside_when_one_changes(
    tmp_path: Path, two
) -> None:
    """The index records the pair that made its vectors (and its sentences'): a new engine
    with the same pair answers by meaning at once; with one of the two models changed, the
    old index answers by words (saying so) until the new vectors are in."""
    from memo_core import Engine, ModelSource, NoticeKind

    a, b = two
    other = load_model_dir(make_tiny_model_dir(tmp_path / "c", dim=8, words=WORDS, seed=9))
    notes = write_notes(tmp_path / "notes", {"n.md": "# N\n\nbeets in the bowl sings\n"})
    first = PairedEmbedder(a, b, share=0.9, nonsense_gate=0.25, lenient=-0.08, second_look=0.6)
    with Engine(models=ModelSource(first)) as e:
        e.refresh(notes)
        [st] = e.status(notes)
        assert st.model == first.model_id and st.chunks_without_vectors == 0
    again = PairedEmbedder(a, b, share=0.9, nonsense_gate=0.25, lenient=-0.08, second_look=0.6)
    with Engine(models=ModelSource(again)) as e:
        hits = e.search(notes, "beets bowl", mode="vec", refresh=False)
        assert [h.relpath for h in hits] == ["n.md"] and not hits.notices
    changed = PairedEmbedder(a, other, share=0.9, nonsense_gate=0.25, lenient=-0.08)
    with Engine(models=ModelSource(changed)) as e:
        hits = e.search(notes, "beets bowl", mode="hybrid", refresh=False)
        assert NoticeKind.OTHER_MODEL in [n.kind for n in hits.notices]
        assert hits[0].found_by == ("lex",)
        notices = e.refresh(notes).notices
        assert [n.kind for n in notices] == [NoticeKind.REBUILT]
        [st] = e.status(notes)
        assert st.model == changed.model_id and st.chunks_without_vectors == 0
        assert e.search(notes, "beets bowl", mode="vec", refresh=False)[0].relpath == "n.md"


# Russian notes whose file names keep English words: an English question shares one stray
# word ("files") with a note that means something else.
STRAY_NOTES = {
    "backup-restic.md": "# Резервные копии\n\nКаждую ночь restic сохраняет домашнюю папку в "
    "облако. Чтобы вернуть удалённые файлы, монтирую репозиторий и копирую нужное обратно.\n",
    "docker-compose.md": "# Заметки о сервере\n\nНа сервере крутятся контейнеры: nextcloud, "
    "база и прокси. Обновляю их раз в месяц.\n",
    "files-cleanup.md": "# Уборка диска\n\nРаз в квартал чищу загрузки и кэш браузера, "
    "старые видео переношу на внешний диск.\n",
    "trip.md": "# Поездка\n\nВзять паспорт, зарядку и билеты, проверить бронь гостиницы.\n",
}


@pytest.mark.default_model
def test_a_stray_word_in_a_file_name_does_not_outrank_the_meaning(
    tmp_path: Path, real_default: Embedder, real_model: Embedder
) -> None:
    query = "restore deleted files from backup"
    notes = write_notes(tmp_path / "pair", STRAY_NOTES)
    with Searcher(notes, embedder=real_default) as s:
        meaning = s.search(query, k=1, mode="vec")[0].relpath
        assert meaning == "backup-restic.md"
        assert s.search(query, k=1, mode="hybrid")[0].relpath == meaning
    # e5-small alone: its vectors found the backup too, and the stray word outranked them.
    alone = write_notes(tmp_path / "e5", STRAY_NOTES)
    with Searcher(alone, embedder=real_model) as s:
        assert s.search(query, k=1, mode="vec")[0].relpath == "backup-restic.md"
        assert s.search(query, k=1, mode="hybrid")[0].relpath == "files-cleanup.md"
