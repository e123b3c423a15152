"""The model canvas: scene, view (zoom, pan, level of detail), items (paint only), export."""
