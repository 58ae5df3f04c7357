"""Model: texts in, unit vectors out.

The `Embedder` interface (`embedder`, `nonsense`), onnxruntime running a model directory
(`onnx_embedder`), the pinned models and their install from registry wheels (`sources`,
`install`, with the 4-bit converters `q4bin`, `q4convert`, `onnx_bert`, `spm_json`), and
one model loaded once per Engine (`loading`).
"""
