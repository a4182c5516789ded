"""The Editor and Sequences pages: the operator's canvas (scene, cards, wires, labels), the
primitive palette, the inspector, the bindings bar, diagnostics, the generated-code panel,
the document the views share, and the loop-transformation sequence editor."""
