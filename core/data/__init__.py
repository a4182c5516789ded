"""Datasets (the bundled digits by default, or the user's own files) and backbone
networks whose convolutions an IR operator replaces. Importing this package is cheap:
torch is imported only by the modules that build networks."""
