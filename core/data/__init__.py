"""Datasets (bundled ones made from real handwritten digits, or the user's own files) and backbone
networks whose convolutions an IR operator replaces. Importing this package is cheap:
torch is imported only by the modules that build networks."""
