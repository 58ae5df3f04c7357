"""memo's unigram tokenizer gives the ids `tokenizers` gives for the same vocabulary (the
tokenizer.json e5-small's converter wrote before, tests/hf_unigram.py), on made vocabularies
and on the real e5-small's, and its file is read strictly."""

from __future__ import annotations

import os
import struct
import unicodedata
from pathlib import Path
from typing import NamedTuple

import pytest
from hf_unigram import tokenizer_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tinyq4 import ALPHABET, _pieces, norm_map
from tokenizers import Tokenizer

from memo_core.errors import ModelUnavailableError
from memo_core.model import unigram
from memo_core.model.onnx_embedder import load_model_dir
from memo_core.model.sources import E5_SMALL_SOURCE, model_dir_of

E5_DIR = Path(os.environ.get("MEMO_TEST_E5_MODEL_DIR") or model_dir_of(E5_SMALL_SOURCE))


def _map() -> dict[int, tuple[int, ...]]:
    """tinyq4's map, and code points whose clusters `tokenizers` replaces whole: a combining
    mark NFKC changes, an Arabic number sign (Prepend), ™ and ©."""
    m = norm_map()
    for c in (0x0340, 0x0341, 0x2122, 0x00BD, 0xFF21, 0x1E9B):
        m[c] = tuple(ord(x) for x in unicodedata.normalize("NFKC", chr(c)))
    m[0x0600] = ()
    m[0x00A9] = (0x28, 0x63, 0x29)  # © -> (c), as some charsmaps do
    return m


class Pair(NamedTuple):
    ours: unigram.UnigramTokenizer
    theirs: Tokenizer

    def __repr__(self) -> str:  # hypothesis prints its arguments
        return "Pair(memo, tokenizers)"


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Pair:
    pieces, scores = _pieces(3)
    pieces = [*pieces, "▁ab", "ab", "abc", "▁the", "the", "<s>x", "ab"]  # a duplicate piece
    scores = [*scores, -3.0, -3.5, -4.0, -2.0, -2.5, -1.0, -9.0]
    path = tmp_path_factory.mktemp("uni") / "tok.unigram"
    nm = _map()
    unigram.write(path, pieces, scores, nm, bos=0, eos=2, pad=1, unk=3)
    ours = unigram.UnigramTokenizer.load(path)
    theirs = Tokenizer.from_str(tokenizer_json(pieces, scores, nm, bos=0, eos=2, unk=3))
    return Pair(ours, theirs)


ODD = (
    "   \t\n\r\u00a0\u200b\u200d\u200c\x01\x7f"  # white space, format and control characters
    "ＡＢﬁ①™©½ẛ"  # characters the map names
    "\u0300\u0301\u0340\u0341\u0308\u20dd\u0903"  # combining marks, one the map names
    "\u0600\u0e33ｶﾞ"  # a Prepend, a SpacingMark letter, a halfwidth sound mark
    "ᄀ가ᅡᆨ각"  # Hangul jamo and syllables
    "漢字😀🫠👍🏽🇷🇺👨‍👩‍👧"  # unknown characters, emoji with modifiers and joiners
    "▁<>/sx-"
)
TEXT = st.text(alphabet=st.sampled_from(list(ALPHABET + ALPHABET.upper() + ODD)), max_size=80)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
def test_ids_equal_tokenizers(pair, text: str) -> None:
    ours, theirs = pair
    assert ours.encode(text) == theirs.encode(text).ids


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "   ",
        "▁",
        "▁▁x",
        " x",
        "x ",
        "x  \n\t y",
        "passage: the server",
        "Ａ\u0301b",  # a cluster under 6 bytes led by a mapped character: replaced whole
        "①\u0301\u0301x",  # the same cluster at 7 bytes: each code point alone
        "a\u0340\u0301",  # a mapped mark inside a cluster: mapped alone
        "\u0600x y",
        "\r\n",
        "\n\u0301",
        "™\u200d😀",
        "©\u0301",
        "漢字 漢",
        "<s>x ab abc",
        "-----",
        "ab" * 40,
    ],
)
def test_ids_on_named_shapes(pair, text: str) -> None:
    ours, theirs = pair
    assert ours.encode(text) == theirs.encode(text).ids
    assert ours.normalize(text) == theirs.normalizer.normalize_str(text)


def _damaged(path: Path, how: str) -> bytes:
    data = bytearray(path.read_bytes())
    if how == "magic":
        data[:4] = b"JUNK"
    elif how == "truncated":
        del data[len(data) // 2 :]
    elif how == "tail":
        data += b"\0"
    elif how == "offsets":
        at = struct.calcsize("<8s4iI") + 4  # the second offset
        data[at : at + 4] = struct.pack("<I", 10**6)
    elif how == "specials":
        data[8:12] = struct.pack("<i", 10**6)
    return bytes(data)


@pytest.mark.parametrize("how", ["magic", "truncated", "tail", "offsets", "specials"])
def test_a_damaged_file_is_a_clear_error(tmp_path: Path, how: str) -> None:
    pieces, scores = _pieces(1)
    good = tmp_path / "good.unigram"
    unigram.write(good, pieces, scores, norm_map(), bos=0, eos=2, pad=1, unk=3)
    bad = tmp_path / "bad.unigram"
    bad.write_bytes(_damaged(good, how))
    if how == "magic":  # not ours: the embedder hands such a file to tokenizers, which says no
        with pytest.raises(ValueError, match="not a memo unigram"):
            unigram.read(bad)
        return
    with pytest.raises(ValueError, match="tokenizer file|special ids"):
        unigram.UnigramTokenizer.load(bad)


def test_a_model_folder_with_a_damaged_tokenizer_says_so(tiny_e5_dir: Path) -> None:
    tok = tiny_e5_dir / "tokenizer.unigram"
    tok.write_bytes(tok.read_bytes()[:1000])
    with pytest.raises(ModelUnavailableError, match="tokenizer.unigram.*truncated"):
        load_model_dir(tiny_e5_dir)


# -- the real e5-small ------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_pair() -> Pair:
    path = E5_DIR / "tokenizer.unigram"
    if not path.is_file():
        pytest.skip(f"e5-small is not installed at {E5_DIR}: `memo model install e5-small`")
    v = unigram.read(path)
    theirs = Tokenizer.from_str(
        tokenizer_json(v.pieces, list(v.scores), v.norm_map, bos=v.bos, eos=v.eos, unk=v.unk)
    )
    return Pair(unigram.UnigramTokenizer.load(path), theirs)


REAL_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=60
)


@pytest.mark.e5_model
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=REAL_TEXT)
def test_real_vocabulary_ids_equal_tokenizers_on_any_text(real_pair, text: str) -> None:
    ours, theirs = real_pair
    assert ours.encode("passage: " + text) == theirs.encode("passage: " + text).ids


@pytest.mark.e5_model
def test_real_vocabulary_ids_equal_tokenizers_on_the_parity_texts(real_pair) -> None:
    """bench/model_parity.py's texts: chunks of the three data sets as memo cuts them (made
    shapes only, where ../shared/data is not beside the repository)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    from model_parity import parity_texts

    ours, theirs = real_pair
    texts = [("query: " if i % 2 else "passage: ") + t for i, t in enumerate(parity_texts(900))]
    differ = [t[:60] for t in texts if ours.encode(t) != theirs.encode(t).ids]
    assert differ == []
