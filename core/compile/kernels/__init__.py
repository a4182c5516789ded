"""The kernel algorithms, one module each, behind one protocol (protocol.py) and registered by
name in core.compile.algorithms: TVM's default lowering (default.py) and the grouped spatial
pack convolution (gspc.py). Every module here imports TVM: worker processes only."""
