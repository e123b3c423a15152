"""TensorRT settings kept in the model (optimization profiles, layer precisions): pure data,
no TensorRT import. Edits that change them are in :mod:`designer.core.edits.trt`."""
