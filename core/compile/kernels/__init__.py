"""The kernel algorithms, one module each, behind one protocol (protocol.py) and registered by
name in core.compile.algorithms: TVM's default lowering (default.py), the grouped spatial pack
convolution (gspc.py), and the convolutions MetaSchedule tunes over a layout of their own
(conv.py: nchwc.py, im2col.py, winograd.py). Every module here imports TVM: worker processes only."""
